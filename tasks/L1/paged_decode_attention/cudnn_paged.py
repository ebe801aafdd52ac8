"""Paged decode attention through cuDNN's fused attention reading the paged KV cache in place, built with
cudnn-frontend's Python graph API (nvidia-cudnn-frontend 1.16): one SDPA node whose K and V are the caches declared as
containers of pages [num_blocks, num_kv_heads, block_size, head_dim] (vLLM's flash layout through strides), with the
block table as each one's page table [batch, 1, max_blocks, 1] and a padding mask from per-sequence lengths (one query
token, seq_lens keys). This is the kernel FlashInfer's cudnn backend (cudnn_batch_decode_with_kv_cache) runs for paged
decode, and Transformer Engine's paged attention on cuDNN.

One graph per (shapes, strides, dtype, device), built on the first call and cached with its constant seq_len_q of
ones, is executed on torch's current stream with a workspace from torch's allocator. cuDNN's fused attention takes
float16 and bfloat16 only; other dtypes fall back to the eager module and say so (fallback_reason)."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import torch
# at import, as every library baseline (the worker's integrity snapshot follows the baselines' imports)
import cudnn

from fastkernels.implementations import import_file

_eager = import_file(Path(__file__).with_name("paged_decode_attention.py"), namespace="tasks.paged_decode_attention")

_IO_TYPES = {torch.float16: cudnn.data_type.HALF, torch.bfloat16: cudnn.data_type.BFLOAT16}
_handles: dict[torch.device, Any] = {}
_graphs: dict[tuple, tuple[Any, dict[str, Any], int, torch.Tensor]] = {}


def _handle(device: torch.device) -> Any:
    """One cuDNN handle a device (made on that device), bound to torch's current stream on every call."""
    on_gpu = device.type == "cuda"
    if device not in _handles:
        with torch.cuda.device(device) if on_gpu else contextlib.nullcontext():
            _handles[device] = cudnn.create_handle()
    cudnn.set_stream(handle=_handles[device], stream=torch.cuda.current_stream(device).cuda_stream if on_gpu else 0)
    return _handles[device]


def one_token_strides(t: torch.Tensor) -> list[int]:
    """A [batch, heads, dim] tensor's strides as [batch, heads, 1, dim] (BSHD with one token)."""
    return [t.stride(0), t.stride(1), t.stride(0), t.stride(2)]


def page_strides(cache: torch.Tensor) -> list[int]:
    """A [num_blocks, block_size, kv_heads, dim] cache's strides as pages [num_blocks, kv_heads, block_size, dim]."""
    return [cache.stride(0), cache.stride(2), cache.stride(1), cache.stride(3)]


def _graph(query: torch.Tensor, key_cache: torch.Tensor, value_cache: torch.Tensor, block_tables: torch.Tensor,
           out: torch.Tensor, scale: float, handle: Any) -> tuple[Any, dict[str, Any], int, torch.Tensor]:
    """The built graph for these tensors' shapes and strides, its tensors by name, its workspace bytes and the
    seq_len_q of ones it reads."""
    key = (query.shape, key_cache.shape, query.stride(), key_cache.stride(), value_cache.stride(),
           block_tables.shape, block_tables.stride(), out.stride(), query.dtype, query.device, scale)
    if key not in _graphs:
        io_type, int32 = _IO_TYPES[query.dtype], cudnn.data_type.INT32
        batch, heads, dim = query.shape
        num_blocks, block_size, kv_heads, _ = key_cache.shape
        max_blocks = block_tables.shape[1]
        graph = cudnn.pygraph(io_data_type=io_type, intermediate_data_type=cudnn.data_type.FLOAT,
                              compute_data_type=cudnn.data_type.FLOAT, handle=handle)
        table_dim, table_stride = [batch, 1, max_blocks, 1], [block_tables.stride(0), block_tables.stride(0),
                                                             block_tables.stride(1), 1]
        tensors = {
            "q": graph.tensor(name="q", dim=[batch, heads, 1, dim], stride=one_token_strides(query),
                              data_type=io_type),
            "k": graph.tensor(name="k", dim=[num_blocks, kv_heads, block_size, dim], stride=page_strides(key_cache),
                              data_type=io_type),
            "v": graph.tensor(name="v", dim=[num_blocks, kv_heads, block_size, dim],
                              stride=page_strides(value_cache), data_type=io_type),
            "table": graph.tensor(name="table", dim=table_dim, stride=table_stride, data_type=int32),
            "seq_len_q": graph.tensor(name="seq_len_q", dim=[batch, 1, 1, 1], stride=[1, 1, 1, 1], data_type=int32),
            "seq_len_kv": graph.tensor(name="seq_len_kv", dim=[batch, 1, 1, 1], stride=[1, 1, 1, 1],
                                       data_type=int32),
        }
        o, _ = graph.sdpa(name="paged_decode", q=tensors["q"], k=tensors["k"], v=tensors["v"],
                          generate_stats=False, attn_scale=scale, use_padding_mask=True,
                          seq_len_q=tensors["seq_len_q"], seq_len_kv=tensors["seq_len_kv"],
                          paged_attention_k_table=tensors["table"], paged_attention_v_table=tensors["table"],
                          paged_attention_max_seq_len_kv=max_blocks * block_size)
        o.set_output(True).set_dim([batch, heads, 1, dim]).set_stride(one_token_strides(out)).set_data_type(io_type)
        tensors["o"] = o
        graph.validate()
        graph.build_operation_graph()
        graph.create_execution_plans([cudnn.heur_mode.A, cudnn.heur_mode.FALLBACK])
        graph.check_support()
        graph.build_plans()
        ones = torch.ones(batch, dtype=torch.int32, device=query.device)
        _graphs[key] = (graph, tensors, graph.get_workspace_size(), ones)
    return _graphs[key]


class PagedDecodeAttention(_eager.PagedDecodeAttention):
    def fallback_reason(self, inputs: dict[str, torch.Tensor]) -> str:
        """Why this case would not run cuDNN's kernel, "" when it does (fastkernels.evaluate._fallback_reason)."""
        query = inputs.get("query")
        if query is not None and query.dtype not in _IO_TYPES:
            return f"cuDNN's fused attention takes float16 or bfloat16, not {str(query.dtype).removeprefix('torch.')}"
        return ""

    def forward(self, query: torch.Tensor, key_cache: torch.Tensor, value_cache: torch.Tensor,
                block_tables: torch.Tensor, seq_lens: torch.Tensor) -> torch.Tensor:
        if self.fallback_reason({"query": query}):
            return super().forward(query, key_cache, value_cache, block_tables, seq_lens)
        out = torch.empty_like(query, memory_format=torch.contiguous_format)
        handle = _handle(query.device)
        graph, tensors, workspace_bytes, ones = _graph(query, key_cache, value_cache, block_tables, out,
                                                       self.softmax_scale, handle)
        workspace = torch.empty(max(workspace_bytes, 1), dtype=torch.uint8, device=query.device)
        graph.execute({tensors["q"]: query, tensors["k"]: key_cache, tensors["v"]: value_cache,
                       tensors["table"]: block_tables, tensors["seq_len_q"]: ones, tensors["seq_len_kv"]: seq_lens,
                       tensors["o"]: out}, workspace, handle=handle)
        return out
