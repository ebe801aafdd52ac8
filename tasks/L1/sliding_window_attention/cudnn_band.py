"""Sliding-window attention through cuDNN's fused flash attention with a diagonal band mask, built with
cudnn-frontend's Python graph API (nvidia-cudnn-frontend 1.16): one SDPA node whose band keeps keys
i - diagonal_band_left_bound < j <= i + diagonal_band_right_bound (TOP_LEFT alignment), so the window is
left bound = sliding_window, right bound = 0 (cudnn-frontend's own PyTorch provider maps FlashAttention's
window_size=(w, 0) to a left bound of w + 1). This is the fused attention PyTorch's cuDNN SDPA backend runs, which
serves causal_attention on the H200, with the band that backend's torch 2.11 signature cannot pass, and the cuDNN
fused attention Transformer Engine selects for sliding-window layers.

The tensors stay in the task's [batch, seq, heads, head_dim] layout: the graph declares them as BHSD with those
strides, GQA by the head counts (query head h reads kv head h // (num_heads / num_kv_heads)), softmax in fp32. One
graph per (shapes, strides, dtype, device), built on the first call and cached, is executed on torch's current
stream with a workspace from torch's allocator. cuDNN's fused attention takes float16 and bfloat16 only; other
dtypes fall back to the eager module and say so (fallback_reason)."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import torch
# at import, as every library baseline (the worker's integrity snapshot follows the baselines' imports)
import cudnn

from fastkernels.implementations import import_file

_eager = import_file(Path(__file__).with_name("sliding_window_attention.py"),
                     namespace="tasks.sliding_window_attention")

_IO_TYPES = {torch.float16: cudnn.data_type.HALF, torch.bfloat16: cudnn.data_type.BFLOAT16}
_handles: dict[torch.device, Any] = {}
_graphs: dict[tuple, tuple[Any, dict[str, Any], int]] = {}


def bhsd_strides(t: torch.Tensor) -> list[int]:
    """A [batch, seq, heads, dim] tensor's strides in BHSD order: the layout the graph declares it in."""
    return [t.stride(0), t.stride(2), t.stride(1), t.stride(3)]


def _handle(device: torch.device) -> Any:
    """One cuDNN handle a device (made on that device), bound to torch's current stream on every call."""
    on_gpu = device.type == "cuda"
    if device not in _handles:
        with torch.cuda.device(device) if on_gpu else contextlib.nullcontext():
            _handles[device] = cudnn.create_handle()
    cudnn.set_stream(handle=_handles[device], stream=torch.cuda.current_stream(device).cuda_stream if on_gpu else 0)
    return _handles[device]


def _graph(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, out: torch.Tensor, window: int, scale: float,
           handle: Any) -> tuple[Any, dict[str, Any], int]:
    """The built graph for these tensors' shapes and strides, its tensors by name, and its workspace bytes."""
    key = (q.shape, k.shape, q.stride(), k.stride(), v.stride(), out.stride(), q.dtype, q.device, window, scale)
    if key not in _graphs:
        io_type = _IO_TYPES[q.dtype]
        graph = cudnn.pygraph(io_data_type=io_type, intermediate_data_type=cudnn.data_type.FLOAT,
                              compute_data_type=cudnn.data_type.FLOAT, handle=handle)
        batch, seq, heads, dim = q.shape
        kv_heads = k.shape[2]
        tensors = {
            "q": graph.tensor(name="q", dim=[batch, heads, seq, dim], stride=bhsd_strides(q), data_type=io_type),
            "k": graph.tensor(name="k", dim=[batch, kv_heads, seq, dim], stride=bhsd_strides(k), data_type=io_type),
            "v": graph.tensor(name="v", dim=[batch, kv_heads, seq, dim], stride=bhsd_strides(v), data_type=io_type),
        }
        o, _ = graph.sdpa(name="sliding_window", q=tensors["q"], k=tensors["k"], v=tensors["v"],
                          generate_stats=False, attn_scale=scale,
                          diagonal_alignment=cudnn.diagonal_alignment.TOP_LEFT,
                          diagonal_band_left_bound=window, diagonal_band_right_bound=0)
        o.set_output(True).set_dim([batch, heads, seq, dim]).set_stride(bhsd_strides(out)).set_data_type(io_type)
        tensors["o"] = o
        graph.validate()
        graph.build_operation_graph()
        graph.create_execution_plans([cudnn.heur_mode.A, cudnn.heur_mode.FALLBACK])
        graph.check_support()
        graph.build_plans()
        _graphs[key] = (graph, tensors, graph.get_workspace_size())
    return _graphs[key]


class SlidingWindowAttention(_eager.SlidingWindowAttention):
    def fallback_reason(self, inputs: dict[str, torch.Tensor]) -> str:
        """Why this case would not run cuDNN's kernel, "" when it does (fastkernels.evaluate._fallback_reason)."""
        q = inputs.get("q")
        if q is not None and q.dtype not in _IO_TYPES:
            return f"cuDNN's fused attention takes float16 or bfloat16, not {str(q.dtype).removeprefix('torch.')}"
        return ""

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        if self.fallback_reason({"q": q}):
            return super().forward(q, k, v)
        out = torch.empty_like(q, memory_format=torch.contiguous_format)
        handle = _handle(q.device)
        graph, tensors, workspace_bytes = _graph(q, k, v, out, self.sliding_window, self.softmax_scale, handle)
        workspace = torch.empty(max(workspace_bytes, 1), dtype=torch.uint8, device=q.device)
        graph.execute({tensors["q"]: q, tensors["k"]: k, tensors["v"]: v, tensors["o"]: out}, workspace,
                      handle=handle)
        return out
