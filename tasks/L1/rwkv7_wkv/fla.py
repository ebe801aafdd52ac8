"""RWKV-7's WKV through flash-linear-attention's chunked Triton kernels, fla.ops.rwkv7.chunk_rwkv7 (the
diagonal-plus-low-rank delta rule, chunk_dplr_delta_rule), called exactly as FLA's RWKV7Attention calls it for a
prefill: w is the log decay, a = -kk, b = kk * a, scale 1, final state in fp32."""

from __future__ import annotations

from pathlib import Path

from fla.ops.rwkv7 import chunk_rwkv7

from fastkernels.implementations import import_file

# The eager module owns the constructor (one interface for every implementation).
_eager = import_file(Path(__file__).with_name("rwkv7_wkv.py"), namespace="tasks.rwkv7_wkv")


class RWKV7WKV(_eager.RWKV7WKV):
    def forward(self, r, w, k, v, kk, a, initial_state=None):
        out = chunk_rwkv7(r=r, w=w, k=k, v=v, a=-kk, b=kk * a, scale=1.0, initial_state=initial_state,
                          output_final_state=True)
        return out[0], out[1]
