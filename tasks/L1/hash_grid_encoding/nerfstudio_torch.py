"""nerfstudio's HashEncoding.pytorch_fwd verbatim in its math (ceil / floor corners, hash_fn with int64 products,
trilinear blend written out pairwise), positions in fp32, table in its dtype, result rounded once to the table's
dtype; tiny-cuda-nn's fused CUDA kernel (nerfstudio's default implementation) is not installable here."""

from __future__ import annotations

from pathlib import Path

import torch

from fastkernels.implementations import import_file

_eager = import_file(Path(__file__).with_name("hash_grid.py"), namespace="tasks.hash_grid_encoding")


class HashEncoding(_eager.HashEncoding):
    def hash_fn(self, in_tensor: torch.Tensor) -> torch.Tensor:
        in_tensor = in_tensor * torch.tensor(_eager.PRIMES, device=in_tensor.device)
        x = torch.bitwise_xor(in_tensor[..., 0], in_tensor[..., 1])
        x = torch.bitwise_xor(x, in_tensor[..., 2])
        x %= self.hash_table_size
        x += self.hash_offset
        return x

    def forward(self, in_tensor: torch.Tensor) -> torch.Tensor:
        in_tensor = in_tensor.float()[..., None, :]
        scaled = in_tensor * self.scalings.view(-1, 1).float()
        scaled_c = torch.ceil(scaled).type(torch.int64)
        scaled_f = torch.floor(scaled).type(torch.int64)
        offset = scaled - scaled_f
        c, f = scaled_c, scaled_f
        hashed_0 = self.hash_fn(scaled_c)
        hashed_1 = self.hash_fn(torch.cat([c[..., 0:1], f[..., 1:2], c[..., 2:3]], dim=-1))
        hashed_2 = self.hash_fn(torch.cat([f[..., 0:1], f[..., 1:2], c[..., 2:3]], dim=-1))
        hashed_3 = self.hash_fn(torch.cat([f[..., 0:1], c[..., 1:2], c[..., 2:3]], dim=-1))
        hashed_4 = self.hash_fn(torch.cat([c[..., 0:1], c[..., 1:2], f[..., 2:3]], dim=-1))
        hashed_5 = self.hash_fn(torch.cat([c[..., 0:1], f[..., 1:2], f[..., 2:3]], dim=-1))
        hashed_6 = self.hash_fn(scaled_f)
        hashed_7 = self.hash_fn(torch.cat([f[..., 0:1], c[..., 1:2], f[..., 2:3]], dim=-1))
        f_0, f_1, f_2, f_3 = (self.hash_table[h] for h in (hashed_0, hashed_1, hashed_2, hashed_3))
        f_4, f_5, f_6, f_7 = (self.hash_table[h] for h in (hashed_4, hashed_5, hashed_6, hashed_7))
        f_03 = f_0 * offset[..., 0:1] + f_3 * (1 - offset[..., 0:1])
        f_12 = f_1 * offset[..., 0:1] + f_2 * (1 - offset[..., 0:1])
        f_56 = f_5 * offset[..., 0:1] + f_6 * (1 - offset[..., 0:1])
        f_47 = f_4 * offset[..., 0:1] + f_7 * (1 - offset[..., 0:1])
        f0312 = f_03 * offset[..., 1:2] + f_12 * (1 - offset[..., 1:2])
        f4756 = f_47 * offset[..., 1:2] + f_56 * (1 - offset[..., 1:2])
        encoded_value = f0312 * offset[..., 2:3] + f4756 * (1 - offset[..., 2:3])
        return torch.flatten(encoded_value, start_dim=-2, end_dim=-1).to(self.hash_table.dtype)
