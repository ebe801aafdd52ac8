"""RWKV-7's WKV in chunks of 16, in PyTorch (fp32): FLA's chunkwise form of the diagonal-plus-low-rank delta rule
(dplr_chunkwise in fla.ops.generalized_delta_rule.dplr.naive), vectorised. Within a chunk, with G the inclusive
and G - w the exclusive cumulative log decays, the pairwise-decayed products r.k, r.b (j <= i) and a.b, a.k (j < i)
are formed for every chunk at once; the low-rank corrections are folded into a WY form with one batched triangular
solve (FLA's naive code inverts row by row); a loop over chunks carries the [K, V] state. Every exponent is a sum of
log decays over a causal span, so it is <= 0."""

from __future__ import annotations

from pathlib import Path

import torch

from fastkernels.implementations import import_file

# The eager module owns the constructor (one interface for every implementation).
_eager = import_file(Path(__file__).with_name("rwkv7_wkv.py"), namespace="tasks.rwkv7_wkv")
# The chunk layout the chunked linear-attention paths share (the gla_chunk task's production PyTorch path).
_chunks = import_file(Path(__file__).parents[1] / "gla_chunk" / "torch_chunk.py", namespace="tasks.gla_chunk")

CHUNK = 16


class RWKV7WKV(_eager.RWKV7WKV):
    def forward(self, r, w, k, v, kk, a, initial_state=None):
        batch, seqlen, heads, dk = r.shape
        dv = v.shape[-1]
        rc, kc, vc, wc, kkc, ac = (_chunks.split_chunks(t, CHUNK) for t in (r, k, v, w, kk, a))
        n = rc.shape[2]
        alpha = -kkc
        beta = kkc * ac
        G = wc.cumsum(dim=3)                                # inclusive: decay from chunk start through step i
        Gx = G - wc                                         # exclusive: through step i - 1
        i = torch.arange(CHUNK, device=r.device)
        upto = (i[None, :] <= i[:, None])[:, :, None]       # [C, C, 1]: j <= i
        before = (i[None, :] < i[:, None])[:, :, None]      # j < i
        incl = (G[:, :, :, :, None] - G[:, :, :, None]).masked_fill(~upto, float("-inf")).exp()
        excl = (Gx[:, :, :, :, None] - G[:, :, :, None]).masked_fill(~before, float("-inf")).exp()
        A_rk = torch.einsum("bhnik,bhnjk,bhnijk->bhnij", rc, kc, incl)
        A_rb = torch.einsum("bhnik,bhnjk,bhnijk->bhnij", rc, beta, incl)
        A_ab = torch.einsum("bhnik,bhnjk,bhnijk->bhnij", alpha, beta, excl)
        A_ak = torch.einsum("bhnik,bhnjk,bhnijk->bhnij", alpha, kc, excl)
        # (I - A_ab) [u | w] = [A_ak v | exp(Gx) alpha]: what each step's low-rank read adds, before the state.
        system = torch.eye(CHUNK, device=r.device) - A_ab
        solved = torch.linalg.solve_triangular(system, torch.cat([A_ak @ vc, Gx.exp() * alpha], dim=-1), upper=False)
        u, w_read = solved[..., :dv], solved[..., dv:]
        r_in = rc * G.exp()
        tail = (G[:, :, :, -1:] - G).exp()
        k_out, b_out = kc * tail, beta * tail
        last = G[:, :, :, -1].exp()
        state = (initial_state.float() if initial_state is not None
                 else r.new_zeros(batch, heads, dk, dv, dtype=torch.float32))
        o = torch.empty_like(vc)
        for c in range(n):
            v2 = u[:, :, c] + w_read[:, :, c] @ state       # the low-rank reads a_i S_{i-1}
            o[:, :, c] = A_rk[:, :, c] @ vc[:, :, c] + A_rb[:, :, c] @ v2 + r_in[:, :, c] @ state
            state = (last[:, :, c, :, None] * state + k_out[:, :, c].transpose(-1, -2) @ vc[:, :, c]
                     + b_out[:, :, c].transpose(-1, -2) @ v2)
        o = _chunks.merge_chunks(o, seqlen)
        return o.to(r.dtype), state
