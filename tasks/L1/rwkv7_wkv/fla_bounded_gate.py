"""RWKV-7's WKV through flash-linear-attention's chunked DPLR kernels as FLA's RWKV7Attention calls them for a prefill
in flash-linear-attention 0.6: chunk_rwkv7(..., safe_gate=True, lower_bound=-exp(-0.5), chunk_size=64). The layer's
log decay is w = -exp(-0.5) * sigmoid(lora(x)), so every w lies in [-exp(-0.5), 0), and the bound licenses FLA's
tensor-core scheme over chunks of 64 (fla.py calls it with the defaults: chunks of 16, no bound). The task's w is
drawn from that range (task.yaml). a = -kk, b = kk * a, scale 1, final state in fp32."""

from __future__ import annotations

import math
from pathlib import Path

from fla.ops.rwkv7 import chunk_rwkv7

from fastkernels.implementations import import_file

# The eager module owns the constructor (one interface for every implementation).
_eager = import_file(Path(__file__).with_name("rwkv7_wkv.py"), namespace="tasks.rwkv7_wkv")

# RWKV7Attention's decay bound, -exp(-0.5) (FLA writes it -0.6065306597126334)
LOG_DECAY_LOWER_BOUND = -math.exp(-0.5)


class RWKV7WKV(_eager.RWKV7WKV):
    def forward(self, r, w, k, v, kk, a, initial_state=None):
        out = chunk_rwkv7(r=r, w=w, k=k, v=v, a=-kk, b=kk * a, scale=1.0, initial_state=initial_state,
                          output_final_state=True, safe_gate=True, lower_bound=LOG_DECAY_LOWER_BOUND,
                          chunk_size=64)
        return out[0], out[1]
