"""Test helper: cudnn-frontend's Python graph API reduced to its contract for one SDPA node, for the cuDNN adapters'
CPU tests (building a real cuDNN graph needs libcudnn and a GPU).

A pygraph holds tensors declared by dims and strides. Its sdpa node maps query head h to kv head
h // (heads / kv_heads); keeps keys i - diagonal_band_left_bound < j <= i + diagonal_band_right_bound (TOP_LEFT
alignment) when bounds are given; with paged_attention_k_table / _v_table reads K and V as containers of pages
[num_blocks, kv_heads, block_size, dim] through a page table [batch, 1, max_blocks, 1]; with a padding mask keeps
the first seq_len_kv[b] keys of sequence b. execute reads and writes the buffers through the declared strides.
`signature_keywords` reads a pybind11 function's keyword names, so a test can check the adapter's keywords against
the installed cudnn-frontend."""

from __future__ import annotations

import re
import sys
import types

import torch


class FakeTensor:
    def __init__(self, name: str, dim: list[int], stride: list[int]) -> None:
        self.name, self.dim, self.stride = name, dim, stride

    def set_output(self, _: bool) -> FakeTensor:
        return self

    def set_dim(self, dim: list[int]) -> FakeTensor:
        self.dim = dim
        return self

    def set_stride(self, stride: list[int]) -> FakeTensor:
        self.stride = stride
        return self

    def set_data_type(self, _: object) -> FakeTensor:
        return self


BUILD_STEPS = ("validate", "build_operation_graph", "create_execution_plans", "check_support", "build_plans")


class FakeGraph:
    """cudnn.pygraph's contract for one SDPA node; records what the adapter declares and calls."""

    def __init__(self, log: dict, **kwargs) -> None:
        self.log, self.steps = log, []
        log["graphs"].append(self)
        log["pygraph_kwargs"].append(set(kwargs))

    def tensor(self, **kwargs) -> FakeTensor:
        self.log["tensor_kwargs"] |= set(kwargs)
        return FakeTensor(kwargs["name"], kwargs["dim"], kwargs["stride"])

    def sdpa(self, **kwargs) -> list:
        self.log["sdpa_kwargs"] = kwargs
        self.sdpa_args = kwargs
        self.o = FakeTensor("o", [], [])
        return [self.o, None]

    def __getattr__(self, step: str):
        if step in BUILD_STEPS:
            return lambda *args: self.steps.append(step)
        raise AttributeError(step)

    def get_workspace_size(self) -> int:
        return 64

    def execute(self, buffers: dict, workspace: torch.Tensor, handle: object) -> None:
        self.log["executed_on_stream"].append(self.log["stream"])
        args = self.sdpa_args

        def read(declared: FakeTensor) -> torch.Tensor:
            return torch.as_strided(buffers[declared], declared.dim, declared.stride)

        q, k, v = (read(args[name]).float() for name in ("q", "k", "v"))
        if args.get("paged_attention_k_table") is not None:  # pages [blocks, kv_heads, block_size, dim] -> BHSD
            k, v = (self._unpage(c, read(args[f"paged_attention_{n}_table"]).long())
                    for c, n in ((k, "k"), (v, "v")))
        group = q.shape[1] // k.shape[1]
        scores = q @ k.repeat_interleave(group, 1).transpose(-1, -2) * args["attn_scale"]
        i = torch.arange(q.shape[2])[:, None]
        j = torch.arange(k.shape[2])[None, :]
        kept = torch.ones(q.shape[0], 1, q.shape[2], k.shape[2], dtype=torch.bool)
        if args.get("diagonal_band_left_bound") is not None:
            kept &= (j > i - args["diagonal_band_left_bound"]) & (j <= i + args["diagonal_band_right_bound"])
        if args.get("use_padding_mask"):
            kept &= j < read(args["seq_len_kv"]).reshape(-1, 1, 1, 1)
        probs = torch.softmax(scores.masked_fill(~kept, float("-inf")), dim=-1)
        torch.as_strided(buffers[self.o], self.o.dim, self.o.stride).copy_(probs @ v.repeat_interleave(group, 1))

    @staticmethod
    def _unpage(container: torch.Tensor, table: torch.Tensor) -> torch.Tensor:
        """Sequence b's keys in table order: [batch, kv_heads, max_blocks * block_size, dim]."""
        pages = container[table[:, 0, :, 0]]  # [batch, max_blocks, kv_heads, block_size, dim]
        return pages.permute(0, 2, 1, 3, 4).flatten(2, 3)


def install(monkeypatch) -> dict:
    """Put the fake `cudnn` module in sys.modules; returns the log its graphs write."""
    log = {"graphs": [], "pygraph_kwargs": [], "tensor_kwargs": set(), "stream": None, "executed_on_stream": []}
    module = types.ModuleType("cudnn")
    module.data_type = types.SimpleNamespace(HALF="half", BFLOAT16="bf16", FLOAT="float", INT32="int32")
    module.diagonal_alignment = types.SimpleNamespace(TOP_LEFT="top_left")
    module.heur_mode = types.SimpleNamespace(A="a", FALLBACK="fallback")
    module.create_handle = lambda: "handle"
    module.set_stream = lambda handle, stream: log.update(stream=stream)
    module.pygraph = lambda **kwargs: FakeGraph(log, **kwargs)
    monkeypatch.setitem(sys.modules, "cudnn", module)
    return log


def signature_keywords(function: object) -> set[str]:
    """The keyword names in a pybind11 function's signature line (its docstring's first line)."""
    return set(re.findall(r"(\w+): ", function.__doc__.splitlines()[0]))
