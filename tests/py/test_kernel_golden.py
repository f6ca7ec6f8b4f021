"""The model against what the live 6.18 kernel produced (tests/golden/kernel-6.18.json,
recorded by `swaplab golden --kernel`): the same per-iteration counts and the same
slot for every page after every iteration. Runs everywhere; no kernel needed."""
import json
import os

import pytest

from swaplab.golden import kernel_variants, pinned
from swaplab.model import run_model

GOLDEN = os.path.join(os.path.dirname(__file__), "..", "golden", "kernel-6.18.json")
with open(GOLDEN) as f:
    KERNEL = json.load(f)


def test_every_kernel_variant_is_pinned():
    assert KERNEL["kernel_release"].startswith("6.18")
    assert sorted(KERNEL["variants"]) == sorted(label for label, _ in kernel_variants())


@pytest.mark.parametrize("label,wp", kernel_variants(), ids=[label for label, _ in kernel_variants()])
def test_model_reproduces_the_kernel(label, wp):
    want = KERNEL["variants"][label]
    res, _ = run_model(wp, "linux-6.18")
    assert res["params"] == want["params"]
    got = pinned(res)
    assert len(got) == len(want["iterations"])
    for i, (g, k) in enumerate(zip(got, want["iterations"]), 1):
        assert g == k, f"{label}: iteration {i}: model {g} != kernel {k}"
