"""Builds a CUDA extension that production Mamba stacks import but that ships no wheel for the device's platform,
from its source distribution: mamba_ssm's selective scan (`selective_scan_cuda`) and Dao-AILab's causal conv1d
(`causal_conv1d_cuda`), what transformers' Mamba, Jamba and Falcon-Mamba run when mamba-ssm and causal-conv1d are
installed. Then selective_scan, causal_conv1d and the Mamba blocks are scored against those kernels rather than a
PyTorch path.

Each extension is compiled as its setup.py compiles it (its own sources unchanged, its nvcc flags, one target: sm_90
by default), with one exception: the backward sources (mamba_ssm's six files, causal-conv1d's one), which inference
never runs and which are the slowest to compile, are replaced by a stub defining the backward entry points to raise
(the bindings reference them). causal-conv1d's full build took 389 s on the H100 machine's 16 cores (2026-12-06) and
linked a 31 MB library, over the device tool's 16 MiB a returned file.
torch.utils.cpp_extension and ninja build against the torch that runs this, so it must run on the machine (image)
that will import the result; scripts/device-chain.sh does so when the sdists are carried (scripts/pack-cuda-sdists.sh).
Usage: python scripts/build_cuda_extension.py {selective_scan_cuda,causal_conv1d_cuda} SDIST --out DIR [--arch 90]
[--objects-only]   (--objects-only compiles without linking: a torch without CUDA, as on a CPU machine, can still
check the sources). Afterwards DIR holds NAME*.so: put DIR on PYTHONPATH.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import sysconfig
import tarfile
import time
from dataclasses import dataclass
from pathlib import Path

HALF_AND_BF16 = ["-U__CUDA_NO_HALF_OPERATORS__", "-U__CUDA_NO_HALF_CONVERSIONS__", "-U__CUDA_NO_BFLOAT16_OPERATORS__",
                 "-U__CUDA_NO_BFLOAT16_CONVERSIONS__", "-U__CUDA_NO_BFLOAT162_OPERATORS__",
                 "-U__CUDA_NO_BFLOAT162_CONVERSIONS__"]
# both setup.py files' CUDA branch, less --ptxas-options=-v (it only prints register use)
COMMON_NVCC = ["--expt-relaxed-constexpr", "--expt-extended-lambda", "--use_fast_math", "-lineinfo", "--threads", "4"]

HALF_TYPES = ("float", "at::Half", "at::BFloat16")  # the input (and causal-conv1d's weight) types bindings dispatch
SELECTIVE_SCAN_BACKWARD_STUB = """// fastkernels: the backward entry point selective_scan.cpp binds, defined to raise
// (a forward-only build)
#include <stdexcept>
#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>
#include <c10/util/complex.h>
#include "selective_scan.h"

template <typename input_t, typename weight_t>
void selective_scan_bwd_cuda(SSMParamsBwd &params, cudaStream_t stream) {
    throw std::runtime_error("selective_scan_cuda was built forward-only (scripts/build_cuda_extension.py)");
}
""" + "".join(f"template void selective_scan_bwd_cuda<{i}, {w}>(SSMParamsBwd &, cudaStream_t);\n"
              for i in HALF_TYPES for w in ("float", "c10::complex<float>"))

CAUSAL_CONV1D_BACKWARD_STUB = """// fastkernels: the two backward entry points causal_conv1d.cpp binds, defined to raise
// (a forward-only build)
#include <stdexcept>
#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>
#include "causal_conv1d.h"
""" + "".join(f"""
template <typename input_t, typename weight_t>
void {entry}(ConvParamsBwd &params, cudaStream_t stream) {{
    throw std::runtime_error("causal_conv1d_cuda was built forward-only (scripts/build_cuda_extension.py)");
}}
""" + "".join(f"template void {entry}<{i}, {w}>(ConvParamsBwd &, cudaStream_t);\n"
              for w in HALF_TYPES for i in HALF_TYPES)
    for entry in ("causal_conv1d_bwd_cuda", "causal_conv1d_channellast_bwd_cuda"))


@dataclass(frozen=True)
class Extension:
    directory: str  # the sources' directory inside the sdist
    sources: tuple[str, ...]
    nvcc: tuple[str, ...]
    cxx: tuple[str, ...]
    stubs: tuple[tuple[str, str], ...] = ()  # (file name, text) written beside the sources and compiled with them


EXTENSIONS = {
    "selective_scan_cuda": Extension(  # mamba_ssm 2.3.2
        "csrc/selective_scan", ("selective_scan.cpp", "selective_scan_fwd_fp32.cu", "selective_scan_fwd_fp16.cu",
                                "selective_scan_fwd_bf16.cu"),
        ("-O3", "-std=c++17", *HALF_AND_BF16, *COMMON_NVCC), ("-O3", "-std=c++17"),
        (("selective_scan_bwd_stub.cu", SELECTIVE_SCAN_BACKWARD_STUB),)),
    "causal_conv1d_cuda": Extension(  # causal-conv1d 1.7.0
        "csrc", ("causal_conv1d.cpp", "causal_conv1d_fwd.cu", "causal_conv1d_update.cu"),
        ("-O3", *HALF_AND_BF16, *COMMON_NVCC), ("-O3",),
        (("causal_conv1d_bwd_stub.cu", CAUSAL_CONV1D_BACKWARD_STUB),)),
}


def unpack(name: str, sdist: Path, into: Path) -> tuple[Path, list[Path]]:
    """(the extension's source directory, extracted under `into`, with its stubs; the files to compile)."""
    spec = EXTENSIONS[name]
    with tarfile.open(sdist) as archive:
        members = [m for m in archive.getmembers()
                   if m.isfile() and m.name.split("/", 1)[-1].startswith(spec.directory + "/")]
        found = {Path(m.name).name for m in members}
        if not set(spec.sources) <= found:
            raise SystemExit(f"build_cuda_extension.py: {sdist} lacks {name}'s sources "
                             f"({', '.join(sorted(set(spec.sources) - found))} under {spec.directory}/)")
        archive.extractall(into, members=members, filter="data")
    source = next(into.glob(f"*/{spec.directory}"))
    for file_name, text in spec.stubs:
        (source / file_name).write_text(text)
    return source, [source / f for f in (*spec.sources, *(file_name for file_name, _ in spec.stubs))]


def compile_objects(name: str, source: Path, files: list[Path], arch: str) -> None:
    """nvcc -c on every file, as the build would, without linking (checks the sources where torch has no CUDA)."""
    import torch.utils.cpp_extension as ext

    includes = [f"-I{path}" for path in ext.include_paths()] + [f"-I{source}", f"-I{sysconfig.get_paths()['include']}"]
    if not any((Path(path) / "c10/cuda/impl/cuda_cmake_macros.h").exists() for path in ext.include_paths()):
        shim = source / "cpu_torch_shim"  # a CPU torch lacks this generated header: its one define
        (shim / "c10/cuda/impl").mkdir(parents=True, exist_ok=True)
        (shim / "c10/cuda/impl/cuda_cmake_macros.h").write_text("#pragma once\n#define C10_CUDA_BUILD_SHARED_LIBS\n")
        includes.append(f"-I{shim}")
    for path in files:
        language = ["-x", "cu"] if path.suffix == ".cu" else ["-x", "c++"]
        subprocess.run(["nvcc", "-c", str(path), "-o", f"{path}.o", *language, *includes,
                        f"-DTORCH_EXTENSION_NAME={name}", *EXTENSIONS[name].nvcc,
                        f"-gencode=arch=compute_{arch},code=sm_{arch}", "-Xcompiler", "-fPIC"], check=True)


def build(name: str, source: Path, files: list[Path], out: Path, arch: str) -> Path:
    import torch.utils.cpp_extension as ext

    spec = EXTENSIONS[name]
    ext.load(name=name, sources=[str(path) for path in files], extra_cflags=list(spec.cxx),
             extra_include_paths=[str(source)],
             extra_cuda_cflags=[*spec.nvcc, f"-gencode=arch=compute_{arch},code=sm_{arch}"],
             build_directory=str(out), verbose=False, is_python_module=True)
    return next(out.glob(f"{name}*.so"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("name", choices=sorted(EXTENSIONS))
    parser.add_argument("sdist", type=Path)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--arch", default="90")
    parser.add_argument("--objects-only", action="store_true")
    args = parser.parse_args(argv)
    if not args.sdist.is_file():
        parser.error(f"{args.sdist}: no such source distribution")
    os.environ.setdefault("MAX_JOBS", str(os.cpu_count() or 1))
    start = time.monotonic()
    args.out.mkdir(parents=True, exist_ok=True)
    source, files = unpack(args.name, args.sdist, args.out / "src")
    if args.objects_only:
        compile_objects(args.name, source, files, args.arch)
        print(f"{args.name}: {len(files)} files compiled for sm_{args.arch} in {time.monotonic() - start:.0f} s "
              f"(not linked)")
    else:
        library = build(args.name, source, files, args.out, args.arch)
        print(f"{args.name}: {library} built for sm_{args.arch} in {time.monotonic() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
