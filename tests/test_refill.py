"""Fresh input values before every timed call: what `refill_inputs` writes into the timed tensors, `redrawn_inputs`
rebuilds from the same seed (the judge and the baseline's second look rebuild a rechecked call's inputs that way), on
any layout; floating draws go straight into the tensor, and the draws keep their manifest's distribution."""

from __future__ import annotations

import torch

from fastkernels.inputs import generator, redrawn_inputs, refill_inputs
from fastkernels.manifest import Manifest

ROWS = 4096  # enough draws to see a distribution's moments
MANIFEST = Manifest.model_validate({
    "name": "refill_spec", "level": 1, "categories": ["test"], "architectures": ["none"], "families": ["recommendation"],
    "description": "inputs of every kind a refill draws",
    "mirrors": {"library": "torch", "module": "torch", "symbol": "none"},
    "interface": {"class": "Module", "init": [], "forward": ["x", "scale", "index", "position", "count"]},
    "implementations": {"eager": {"name": "eager", "source": "none.py:Module", "provenance": "none"},
                        "production": []},
    "inputs": {"x": {"shape": ["rows", 48]},
               "scale": {"shape": [7, "rows"], "dist": "uniform", "low": -2, "high": 3, "dtype": "float32"},
               "index": {"shape": ["rows"], "dist": "randint", "low": 0, "high": 5, "dtype": "int64"},
               "position": {"shape": ["rows"], "dist": "arange", "dtype": "int64"},
               "count": {"shape": ["rows"], "mean": 3.0, "std": 1.0, "dtype": "int32"}},
    "cost": {"bytes": 1, "flops": 1},
    "cases": [{"name": "cpu_rows", "tier": "cpu", "init": {}, "dims": {"rows": ROWS}, "dtype": "bfloat16"}],
})
CASE = MANIFEST.case("cpu_rows")


def timed_tensors(scale_transposed: bool = False) -> dict[str, torch.Tensor]:
    """Tensors shaped as the case's inputs, as the timing sets hold them (`scale` optionally not contiguous)."""
    scale = torch.zeros(ROWS, 7).t() if scale_transposed else torch.zeros(7, ROWS)
    return {"x": torch.zeros(ROWS, 48, dtype=torch.bfloat16), "scale": scale,
            "index": torch.zeros(ROWS, dtype=torch.int64), "position": torch.arange(ROWS),
            "count": torch.zeros(ROWS, dtype=torch.int32)}


def test_a_refill_writes_fresh_values_into_the_same_tensors_and_leaves_positions_alone():
    tensors = timed_tensors()
    addresses = {name: tensor.data_ptr() for name, tensor in tensors.items()}
    refill_inputs(MANIFEST, CASE, tensors, generator("cpu", 1))
    first = {name: tensor.clone() for name, tensor in tensors.items()}
    refill_inputs(MANIFEST, CASE, tensors, generator("cpu", 2))
    assert {name: tensor.data_ptr() for name, tensor in tensors.items()} == addresses
    assert not torch.equal(first["x"], tensors["x"]) and not torch.equal(first["scale"], tensors["scale"])
    assert torch.equal(tensors["position"], torch.arange(ROWS))


def test_what_a_refill_wrote_is_rebuilt_from_the_seed_whatever_the_layout_of_either_side():
    for refilled_layout, rebuilt_layout in ((False, False), (True, False), (False, True)):
        tensors = timed_tensors(scale_transposed=refilled_layout)
        refill_inputs(MANIFEST, CASE, tensors, generator("cpu", 11))
        like = timed_tensors(scale_transposed=rebuilt_layout)
        rebuilt = redrawn_inputs(MANIFEST, CASE, like, generator("cpu", 11))
        assert all(torch.equal(rebuilt[name], tensors[name]) for name in tensors), (refilled_layout, rebuilt_layout)
        assert rebuilt["scale"].stride() == like["scale"].stride()  # shaped and strided like `like`


def test_refilled_values_keep_the_manifests_distribution():
    tensors = timed_tensors()
    refill_inputs(MANIFEST, CASE, tensors, generator("cpu", 3))
    x = tensors["x"].float()
    assert abs(x.mean().item()) < 0.02 and abs(x.std().item() - 1.0) < 0.02
    assert tensors["scale"].min() >= -2 and tensors["scale"].max() <= 3 and tensors["scale"].std() > 1
    assert set(tensors["index"].tolist()) <= set(range(5)) and len(set(tensors["index"].tolist())) == 5
    count = tensors["count"].float()  # a normal draw of an integer dtype: drawn in float and cast
    assert tensors["count"].dtype == torch.int32 and abs(count.mean().item() - 2.5) < 0.1
