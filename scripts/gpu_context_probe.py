"""Prints, on the machine it runs on, what tells a process that holds a CUDA context from one that does not: whether
NVML's process lists name this pid namespace's pids (the warden's helper-process watch reads them, gpu_processes.py),
and which /dev/nvidia* files each kind of process keeps open or mapped.

Why: on a lent H200 (2026-12-04) a helper process with its own CUDA context went unnamed by the NVML watch, which
had named it on other lent machines; NVML reports host pids, and a container with its own pid namespace matches none.
Kinds of process started here, each below this one: a CUDA context (torch), NVML only (pynvml), torch's NVML-based
availability check, Triton's driver query (cuInit, no tensor), and Inductor's compile workers (max-autotune compile of
a small function in a process that then idles).
Usage (on the GPU machine): python scripts/gpu_context_probe.py [OUT.json]
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

KINDS = {
    "cuda_context": "import torch; torch.ones(1, device='cuda'); torch.cuda.synchronize()",
    "nvml_only": "import pynvml; pynvml.nvmlInit(); pynvml.nvmlDeviceGetCount()",
    "torch_nvml_check": "import os; os.environ['PYTORCH_NVML_BASED_CUDA_CHECK']='1'; import torch; "
                        "torch.cuda.is_available(); torch.cuda.device_count()",
    "triton_driver_query": "import triton; triton.runtime.driver.active.get_current_target()",
    "inductor_compile": "import torch\n"
                        "f = torch.compile(lambda x: torch.relu(x @ x) + 1, mode='max-autotune-no-cudagraphs')\n"
                        "f(torch.randn(256, 256, device='cuda')); torch.cuda.synchronize()",
}
READY = "print('ready', flush=True); import time; time.sleep(600)"


def device_files(pid: int) -> dict[str, list[str]]:
    """The /dev/nvidia* files `pid` holds open (fd) and mapped (maps)."""
    opened: set[str] = set()
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if target.startswith("/dev/nvidia"):
                opened.add(target)
    except OSError as error:
        return {"error": [str(error)]}
    mapped: set[str] = set()
    try:
        for line in Path(f"/proc/{pid}/maps").read_text().splitlines():
            parts = line.split(maxsplit=5)
            if len(parts) == 6 and parts[5].startswith("/dev/nvidia"):
                mapped.add(parts[5].split(" (deleted)")[0])
    except OSError:
        pass
    return {"open": sorted(opened), "mapped": sorted(mapped)}


def below(root: int) -> list[int]:
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                parents[int(entry)] = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    found, frontier = set(), {root}
    while frontier:
        frontier = {pid for pid, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return sorted(found)


def nvml_pids() -> list[int]:
    import pynvml

    pynvml.nvmlInit()
    pids: set[int] = set()
    for index in range(pynvml.nvmlDeviceGetCount()):
        handle = pynvml.nvmlDeviceGetHandleByIndex(index)
        for getter in (pynvml.nvmlDeviceGetComputeRunningProcesses, pynvml.nvmlDeviceGetGraphicsRunningProcesses):
            pids.update(int(process.pid) for process in getter(handle))
    return sorted(pids)


def main() -> None:
    started: dict[str, subprocess.Popen[str]] = {}
    for kind, code in KINDS.items():
        started[kind] = subprocess.Popen([sys.executable, "-c", code + "\n" + READY], stdout=subprocess.PIPE, text=True)
    for kind, process in started.items():
        line = process.stdout.readline().strip() if process.stdout else ""
        if line != "ready":
            print(f"{kind}: did not get ready (exit {process.poll()})", file=sys.stderr)
    time.sleep(2)
    listed = nvml_pids()
    report: dict[str, object] = {
        "this_pid": os.getpid(),
        "nspid_line": next((line for line in Path("/proc/self/status").read_text().splitlines()
                            if line.startswith("NSpid")), ""),
        "nvml_pids": listed,
        "kinds": {},
    }
    for kind, process in started.items():
        tree = [process.pid, *below(process.pid)]
        report["kinds"][kind] = [  # type: ignore[index]
            {"pid": pid, "in_nvml_list": pid in listed,
             "command": Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")[:120].decode(errors="replace"),
             **device_files(pid)} for pid in tree]
    for process in started.values():
        process.kill()
    text = json.dumps(report, indent=1)
    print(text)
    if len(sys.argv) > 1:
        Path(sys.argv[1]).write_text(text)


if __name__ == "__main__":
    main()
