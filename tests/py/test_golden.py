"""Golden per-iteration results of every policy (regenerate: swaplab golden)."""
import json
import os

import pytest

from swaplab import _core
from swaplab.golden import compute_golden, golden_path

POLICIES = [p["name"] for p in _core.policies()]


@pytest.mark.parametrize("policy", POLICIES)
def test_golden_results_unchanged(policy, root):
    path = golden_path(policy, os.path.join(root, "tests", "golden"))
    assert os.path.exists(path), f"no golden file for {policy}: run `swaplab golden --policy {policy}`"
    with open(path) as f:
        want = json.load(f)
    got = compute_golden(policy)
    assert set(got["variants"]) == set(want["variants"])
    for label, v in want["variants"].items():
        g = got["variants"][label]
        for i, (a, b) in enumerate(zip(g["iterations"], v["iterations"]), 1):
            assert a == b, f"{policy} {label}: iteration {i} differs: {a} != {b}"
        assert len(g["iterations"]) == len(v["iterations"])


def test_golden_first_iterations_of_thp_swap_v1():
    """Hand-read anchors: the first iterations of the default thp-swap-v1 run."""
    with open(golden_path("linux-6.18", os.path.join(os.path.dirname(__file__), "..", "golden"))) as f:
        v1 = json.load(f)["variants"]["v1"]["iterations"]
    assert [it["sizes"]["64"] for it in v1[:3]] == [[217, 0, 0], [227, 0, 0], [227, 0, 0]]
