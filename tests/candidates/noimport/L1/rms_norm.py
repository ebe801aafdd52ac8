"""Imports a module that does not exist: must be COMPILE_ERROR."""
import torch
import fastkernels_no_such_extension  # noqa: F401


class RMSNorm(torch.nn.Module):
    pass
