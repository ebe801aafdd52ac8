"""A stand-in NVML for tests/test_warden.py: one GPU whose compute processes are the pids listed in the file
$FAKE_NVML_PIDS (none while it does not exist)."""

import os


class _Process:
    def __init__(self, pid: int) -> None:
        self.pid = pid


def nvmlInit() -> None:
    pass


def nvmlDeviceGetCount() -> int:
    return 1


def nvmlDeviceGetHandleByIndex(index: int) -> int:
    return index


def nvmlDeviceGetComputeRunningProcesses(handle: int) -> list[_Process]:
    try:
        with open(os.environ["FAKE_NVML_PIDS"]) as listed:
            return [_Process(int(word)) for word in listed.read().split()]
    except FileNotFoundError:
        return []


def nvmlDeviceGetGraphicsRunningProcesses(handle: int) -> list[_Process]:
    return []
