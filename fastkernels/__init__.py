"""fastkernels: scores candidate GPU kernels against production kernels on real model shapes."""

__version__ = "0.1.0"
