"""Builds mamba_ssm's CUDA selective scan (the `selective_scan_cuda` extension transformers' Mamba runs when
mamba-ssm is installed) from its source distribution, forward only, so selective_scan and the Mamba blocks can be
scored against the kernel production runs rather than a PyTorch scan.

mamba-ssm ships no wheel for this platform; `pip install mamba-ssm` compiles ten CUDA files, six of them the backward
pass inference never runs (the slowest to compile). This compiles the package's own binding (selective_scan.cpp) and
its three forward files unchanged, with its setup.py's nvcc flags and one target (sm_90 by default), plus a stub
that defines the backward entry point to raise: the binding references it. torch.utils.cpp_extension and ninja do
the build against the torch that runs it, so it must run on the machine (image) that will import the result.
Usage: python scripts/build_selective_scan.py mamba_ssm-2.3.2.post1.tar.gz --out DIR [--arch 90] [--objects-only]
(--objects-only compiles without linking: a torch without CUDA, as on a CPU machine, can still check the sources).
Afterwards DIR holds selective_scan_cuda*.so: put DIR on PYTHONPATH.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tarfile
import time
from pathlib import Path

FORWARD = ("selective_scan.cpp", "selective_scan_fwd_fp32.cu", "selective_scan_fwd_fp16.cu",
           "selective_scan_fwd_bf16.cu")
# mamba_ssm 2.3.2's setup.py, CUDA branch (less --ptxas-options=-v, which only prints register use)
NVCC_FLAGS = ["-O3", "-std=c++17", "-U__CUDA_NO_HALF_OPERATORS__", "-U__CUDA_NO_HALF_CONVERSIONS__",
              "-U__CUDA_NO_BFLOAT16_OPERATORS__", "-U__CUDA_NO_BFLOAT16_CONVERSIONS__",
              "-U__CUDA_NO_BFLOAT162_OPERATORS__", "-U__CUDA_NO_BFLOAT162_CONVERSIONS__", "--expt-relaxed-constexpr",
              "--expt-extended-lambda", "--use_fast_math", "-lineinfo", "--threads", "4"]
BACKWARD_STUB = """// fastkernels: the backward entry point selective_scan.cpp binds, defined to raise (forward-only build)
#include <stdexcept>
#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>
#include <c10/util/complex.h>
#include "selective_scan.h"

template <typename input_t, typename weight_t>
void selective_scan_bwd_cuda(SSMParamsBwd &params, cudaStream_t stream) {
    throw std::runtime_error("selective_scan_cuda was built forward-only (scripts/build_selective_scan.py)");
}
"""
INSTANCES = [(i, w) for i in ("float", "at::Half", "at::BFloat16") for w in ("float", "c10::complex<float>")]


def unpack(sdist: Path, into: Path) -> Path:
    """The sdist's csrc/selective_scan directory, extracted under `into`, with the backward stub beside it."""
    with tarfile.open(sdist) as archive:
        members = [m for m in archive.getmembers() if "/csrc/selective_scan/" in m.name and m.isfile()]
        if not members:
            raise SystemExit(f"build_selective_scan.py: {sdist} has no csrc/selective_scan (not a mamba_ssm sdist)")
        archive.extractall(into, members=members, filter="data")
    source = next(into.glob("*/csrc/selective_scan"))
    stub = BACKWARD_STUB + "".join(f"template void selective_scan_bwd_cuda<{i}, {w}>(SSMParamsBwd &, cudaStream_t);\n"
                                   for i, w in INSTANCES)
    (source / "selective_scan_bwd_stub.cu").write_text(stub)
    return source


def compile_objects(source: Path, arch: str) -> None:
    """nvcc -c on every file, as the build would, without linking (checks the sources where torch has no CUDA)."""
    import torch.utils.cpp_extension as ext

    import sysconfig

    includes = [f"-I{path}" for path in ext.include_paths()] + [f"-I{source}", f"-I{sysconfig.get_paths()['include']}"]
    shim = source / "cpu_torch_shim" / "c10" / "cuda" / "impl" / "cuda_cmake_macros.h"
    if not any((Path(path) / "c10/cuda/impl/cuda_cmake_macros.h").exists() for path in ext.include_paths()):
        shim.parent.mkdir(parents=True, exist_ok=True)  # a CPU torch lacks this generated header: its one define
        shim.write_text("#pragma once\n#define C10_CUDA_BUILD_SHARED_LIBS\n")
        includes.append(f"-I{source / 'cpu_torch_shim'}")
    for name in (*FORWARD, "selective_scan_bwd_stub.cu"):
        language = ["-x", "cu"] if name.endswith(".cu") else ["-x", "c++"]
        command = ["nvcc", "-c", str(source / name), "-o", str(source / (name + ".o")), *language, *includes,
                   "-DTORCH_EXTENSION_NAME=selective_scan_cuda", *NVCC_FLAGS, f"-gencode=arch=compute_{arch},code=sm_{arch}", "-Xcompiler", "-fPIC"]
        subprocess.run(command, check=True)


def build(source: Path, out: Path, arch: str) -> Path:
    import torch.utils.cpp_extension as ext

    out.mkdir(parents=True, exist_ok=True)
    ext.load(name="selective_scan_cuda", sources=[str(source / name) for name in
                                                 (*FORWARD, "selective_scan_bwd_stub.cu")],
             extra_cflags=["-O3", "-std=c++17"], extra_include_paths=[str(source)],
             extra_cuda_cflags=[*NVCC_FLAGS, f"-gencode=arch=compute_{arch},code=sm_{arch}"],
             build_directory=str(out), verbose=False, is_python_module=True)
    return next(out.glob("selective_scan_cuda*.so"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sdist", type=Path)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--arch", default="90")
    parser.add_argument("--objects-only", action="store_true")
    args = parser.parse_args(argv)
    if not args.sdist.is_file():
        parser.error(f"{args.sdist}: no such source distribution")
    os.environ.setdefault("MAX_JOBS", str(os.cpu_count() or 1))
    start = time.monotonic()
    source = unpack(args.sdist, args.out / "src")
    if args.objects_only:
        compile_objects(source, args.arch)
        print(f"selective_scan: {len(FORWARD) + 1} files compiled for sm_{args.arch} in "
              f"{time.monotonic() - start:.0f} s (not linked)")
    else:
        library = build(source, args.out, args.arch)
        print(f"selective_scan: {library} built for sm_{args.arch} in {time.monotonic() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
