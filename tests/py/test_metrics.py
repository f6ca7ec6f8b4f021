"""Fragmentation metrics in results (docs/metrics.md): the model's per
iteration, and the kernel's path (a layout's slots) checked on a model run."""
import json

import pytest

from swaplab import _core
from swaplab.metrics import layout_frag
from swaplab.model import run_model
from swaplab.params import WorkloadParams


def test_run_metrics_per_iteration(cli):
    p = cli("run", "thp-swap-v1", "-s", "--iterations", "5", "--metrics", "--json", "-", check=True)
    res = json.loads(p.stdout)
    nclusters = res["params"]["swap_bytes"] // (2 << 20)
    for it in res["iterations"]:
        f = it["frag"]
        assert f["free_slots"] == sum(b << k for k, b in enumerate(f["free_blocks"]))
        assert f["free_aligned"][0] == f["free_slots"]
        assert all(0 <= u <= 1 for u in f["unusable_index"])
        assert all(x == -1.0 or 0 <= x <= 1 for x in f["fragmentation_index"])
        assert 0.0 <= f["bluestore_score"] <= 1.0
        assert sum(sum(v) for v in f["clusters"].values()) == nclusters
        assert len(f["cluster_map"]) == 2 * nclusters
    p = cli("run", "thp-swap-v1", "--iterations", "2", "--json", "-", check=True)
    assert "frag" not in json.loads(p.stdout)["iterations"][0]


@pytest.mark.parametrize("variant", [{}, {"small_folios": True}, {"mthp_kb": [16, 64]}])
def test_layout_path_equals_the_device_path(variant):
    """On linux-6.18 every used slot but the header holds a page of the
    workload, so the metrics from the layout (the kernel's way) equal the
    model's own from its slot map."""
    wp = WorkloadParams(workload="thp-swap-v1", iterations=20, **variant)
    res, layout = run_model(wp, "linux-6.18", metrics=True)
    assert res["iterations"][-1]["cache_held_pages"] == 0
    own = dict(res["iterations"][-1]["frag"])
    for k in ("clusters", "cluster_map"):
        own.pop(k)
    assert layout_frag(layout, wp.swap_bytes // 4096) == own


def test_frag_metrics_of_a_map():
    m = _core.frag_metrics(bytes([1] + [0] * 1023))
    assert m["free_blocks"] == [1] * 10 and m["unusable_index"][9] == pytest.approx(0.499)
    assert m["free_extents"] == 1 and m["bluestore_score"] == 0.0 and "clusters" not in m


def test_kernel_result_carries_every_iterations_metrics():
    """The harness's result builder (no live run: the driver's raw output
    stood in for by a model run's, its metrics in the driver's integer
    thousandths) gives every iteration the model's metrics, and checks the
    last against the final layout."""
    from swaplab.kernel import harness, machine as M
    wp = WorkloadParams(workload="thp-swap-v1", iterations=3, small_folios=True)
    res, layout = run_model(wp, "linux-6.18", metrics=True)
    raw_iters = _core.run(policy="linux-6.18", **wp.core_kwargs())["iterations"]

    def as_driver(f):
        d = {k: v for k, v in f.items() if k not in ("clusters", "cluster_map")}
        d["unusable_index_milli"] = [round(v * 1000) for v in d.pop("unusable_index")]
        d["fragmentation_index_milli"] = [round(v * 1000) for v in d.pop("fragmentation_index")]
        return d
    raw = {"npages": res["layout"]["npages"], "final_layout_hash": _core.layout_hash(layout),
           "seconds": 0.01,
           "iterations": [dict(r, swap_type=0, frag=as_driver(m["frag"]))
                          for r, m in zip(raw_iters, res["iterations"])]}
    k = harness._result(wp, raw, layout, {}, {}, {}, [], 0.1)
    for ki, mi in zip(k["iterations"], res["iterations"]):
        own = {key: v for key, v in mi["frag"].items() if key not in ("clusters", "cluster_map")}
        assert ki["frag"] == own
    # a driver whose last metrics are not its final layout's is refused
    raw["iterations"][-1]["frag"]["free_slots"] += 1
    with pytest.raises(M.HarnessError, match="last fragmentation metrics do not match"):
        harness._result(wp, raw, layout, {}, {}, {}, [], 0.1)
