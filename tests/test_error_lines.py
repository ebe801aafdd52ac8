"""Errors become one line in a row's `reason` or `graph_note`: the exception type, its message (at most 400
characters) and where it was raised; torch's generic CUDA debugging advice is dropped so the error's name fits."""

from __future__ import annotations

from fastkernels.plan import one_line

CUDA_MESSAGE = (
    "CUDA error: operation failed due to a previous error during capture\n"
    "Search for `cudaErrorStreamCaptureInvalidated' in "
    "https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html for more information.\n"
    "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be "
    "incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1\n"
    "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n"
)


def raised(error: BaseException) -> BaseException:
    try:
        raise error
    except BaseException as caught:  # noqa: BLE001 - the traceback is what one_line reads
        return caught


def test_a_cuda_error_keeps_its_message_and_name_without_torchs_advice():
    line = one_line(raised(RuntimeError(CUDA_MESSAGE)))
    assert line.startswith("RuntimeError: CUDA error: operation failed due to a previous error during capture "
                           "(cudaErrorStreamCaptureInvalidated) (at test_error_lines.py:")
    assert "\n" not in line and "CUDA_LAUNCH_BLOCKING" not in line and "docs.nvidia.com" not in line


def test_any_other_message_is_joined_onto_one_line_and_cut_at_400_characters():
    line = one_line(raised(ValueError("first\nsecond " + "x" * 500)))
    assert line.startswith("ValueError: first second xxx")
    assert len(line.split(" (at ")[0]) == len("ValueError: ") + 400


def test_an_empty_message_says_so():
    assert one_line(raised(KeyError())).startswith("KeyError: (no message)")
