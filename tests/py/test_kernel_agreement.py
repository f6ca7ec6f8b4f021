"""Live agreement: short variants on the kernel and on the model give identical
layout dumps and counts. Runs where root and zram exist (here and in CI)."""
import pytest

from conftest import needs_kernel
from swaplab.compare import compare
from swaplab.model import run_model
from swaplab.params import WorkloadParams

VARIANTS = [
    ("v1-s", dict(workload="thp-swap-v1", small_folios=True)),
    ("v1-128K", dict(workload="thp-swap-v1", mthp_kb=[128])),
    ("v2-a-s", dict(workload="thp-swap", aligned_swapin=True, small_folios=True)),
    ("v2-16K", dict(workload="thp-swap", mthp_kb=[16])),
    ("v1-32M", dict(workload="thp-swap-v1", swap_bytes=32 << 20)),
    # several devices: equal priorities take turns; a small one above a big one
    ("v1-s-2x32M", dict(workload="thp-swap-v1", small_folios=True, swap_bytes=32 << 20, swap_prio=5,
                        extra_swap=[dict(bytes=32 << 20, kind="zram", prio=5)])),
    ("v1-16M-over-64M", dict(workload="thp-swap-v1", swap_bytes=16 << 20, swap_prio=10,
                             extra_swap=[dict(bytes=64 << 20, kind="zram", prio=1)])),
    # regions placed off 2 MiB, mixed sizes up to 2M (docs/placement.md)
    ("v1-s-16K-64K-256K-at-1028K", dict(workload="thp-swap-v1", small_folios=True, mthp_kb=[16, 64, 256],
                                        region_offset=[1028 << 10, 12 << 10])),
    ("v2-a-64K-2M-at-704K", dict(workload="thp-swap", aligned_swapin=True, mthp_kb=[64, 2048],
                                 region_offset=[704 << 10, 0])),
]


@needs_kernel
@pytest.mark.parametrize("label,kw", VARIANTS, ids=[v[0] for v in VARIANTS])
def test_kernel_and_model_layouts_identical(label, kw, tmp_path, monkeypatch):
    from swaplab.kernel import harness, machine as M
    if M.active_swaps():
        pytest.skip("other swap is active")
    monkeypatch.setenv("SWAPLAB_STATE_DIR", str(tmp_path / "state"))
    wp = WorkloadParams(iterations=12, **kw)
    mres, mlay = run_model(wp, "linux-6.18", metrics=True)
    # a kernel run disturbed by another process swapping onto the device
    # (F5: pages on it that are not the workload's), or one whose counts
    # alone differ while every slot agrees (the per-size stats are
    # system-wide: another process's folios count there too), is run again,
    # at most twice, as swaplab validate does; a divergence that repeats, or
    # any slot that differs undisturbed, fails
    for attempt in range(3):
        kres, klay = harness.run_kernel(wp)
        c = compare(mres, kres, mlay, klay, name_a="model", name_b="kernel")
        d = c["first_divergence"]
        if d is None or (kres["first_other_pages_iteration"] is None and d["what"] != ["counts"]):
            break
    assert c["first_divergence"] is None, (c["first_divergence"], kres["first_other_pages_iteration"])
    assert mlay == klay
    # the driver placed each region where it was asked to (--region-offset)
    regions = kres["kernel"]["regions"]
    assert [r["offset"] for r in regions] == wp.region_offset[:len(regions)]
    assert all(int(r["address"], 16) % (2 << 20) == r["offset"] for r in regions)
    for mi, ki in zip(mres["iterations"], kres["iterations"]):
        assert mi["sizes"] == ki["sizes"]
        assert mi["layout_hash"] == ki["layout_hash"]
        if not wp.extra_swap:
            # the driver's per-iteration metrics, from the pages' slots, are
            # the model's from its slot map (which also has cluster states)
            assert {k: v for k, v in mi["frag"].items() if k not in ("clusters", "cluster_map")} == ki["frag"]


@needs_kernel
def test_validate_default_matrix_short(cli, tmp_path):
    """swaplab validate: one row per variant of the default matrix, every row
    agreeing slot for slot (a disturbed kernel run is rerun, F5)."""
    from swaplab.kernel import machine as M
    if M.active_swaps():
        pytest.skip("other swap is active")
    import json
    out = tmp_path / "v.json"
    p = cli("validate", "--iterations", "3", "--json", str(out),
            env={"SWAPLAB_STATE_DIR": str(tmp_path / "state")}, check=True)
    v = json.loads(out.read_text())
    assert [r["variant"] for r in v["rows"]] == [
        "thp-swap-v1 64K", "thp-swap-v1 -s 64K", "thp-swap 64K", "thp-swap -a 64K", "thp-swap -s 64K",
        "thp-swap -a -s 64K", "thp-swap-v1 16K", "thp-swap -a 16K", "thp-swap-v1 32K", "thp-swap -a 32K"]
    for r in v["rows"]:
        if r["kernel_retries"] == 2 and r["first_divergence"] != "none":
            continue  # disturbed three times in a row: reported, not a model error
        assert r["slot_agreement_pct"] == 100.0 and r["first_divergence"] == "none", r["variant"]
    assert "validate: [10/10]" in p.stderr
