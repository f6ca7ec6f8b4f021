"""Several swap devices with priorities (core/src/swapset.c), through the
CLI and the result file: which device each generation fills, and the
shapes the kernel's device rotation predicts."""
import json

import pytest

from swaplab.model import run_model
from swaplab.params import WorkloadParams, MiB


def run(policy, swap_prio=-1, extra=(), iterations=20, **kw):
    wp = WorkloadParams(workload="thp-swap-v1", iterations=iterations, swap_prio=swap_prio,
                        extra_swap=[dict(bytes=b, kind=k, prio=p) for b, k, p in extra], **kw)
    res, _ = run_model(wp, policy, check=1)
    return res


def large_allocs(res):
    return [sum(d["alloc_ok"][1:]) for d in res["swap_devices"]]


def test_one_device_result_is_unchanged():
    res = run("linux-6.18")
    assert "swap_devices" not in res
    assert "swap_prio" not in res["params"] and "extra_swap" not in res["params"]
    assert "inuse_pages_by_device" not in res["iterations"][0]


@pytest.mark.parametrize("policy", ["linux-6.10", "linux-6.12", "linux-6.15", "linux-6.18", "buddy"])
def test_higher_priority_device_takes_everything_it_can(policy):
    # a 64M device of priority 10 holds the whole working set: the other stays empty
    res = run(policy, swap_prio=10, extra=[(64 * MiB, "zram", 1)])
    assert res["swap_devices"][1]["alloc_ok"] == [0] * 10
    assert all(it["inuse_pages_by_device"][1] == 0 for it in res["iterations"])


def test_equal_priorities_share_per_allocation_before_6_15():
    # get_swap_pages() requeues before every large allocation: the two
    # devices of one priority alternate folio by folio
    res = run("linux-6.12", swap_prio=5, extra=[(64 * MiB, "zram", 5)])
    a, b = large_allocs(res)
    assert abs(a - b) <= 1 and a + b > 3000


def test_equal_priorities_share_per_cluster_from_6_15():
    # the per-CPU cursor names a device: 6.15+ stays on it until its cluster
    # is used up, so the split is by clusters (32 64K folios each), not folios
    res = run("linux-6.18", swap_prio=5, extra=[(64 * MiB, "zram", 5)])
    a, b = large_allocs(res)
    assert a + b > 3000 and abs(a - b) > 1
    fast = sum(d["alloc_fast"][4] for d in res["swap_devices"])
    assert fast > 0.85 * (a + b)   # 4054 of 4543 from the cursor


def test_small_high_priority_device_spills_order0_but_not_mthp():
    # 8M at priority 10 fills; large folios try only the first device on the
    # avail list, so they fall back while it has room for order 0 only
    res = run("linux-6.18", swap_prio=10, swap_bytes=8 * MiB, extra=[(64 * MiB, "zram", 1)])
    fb = res["summary"]["64"]["swpout_fallback"]
    assert fb > 0
    assert res["swap_devices"][1]["alloc_ok"][4] > 0    # once the first is full
    assert res["iterations"][-1]["inuse_pages_by_device"][0] > 0.95 * 2047


def test_cli_writes_devices(cli, tmp_path):
    out = tmp_path / "r.json"
    p = cli("run", "thp-swap-v1", "--iterations", "3", "--swap-prio", "5", "--add-swap", "32M:ssd:5",
            "--add-swap", "16M", "--json", str(out))
    assert p.returncode == 0, p.stderr
    res = json.loads(out.read_text())
    assert res["params"]["swap_prio"] == 5
    assert res["params"]["extra_swap"] == [{"bytes": 32 * MiB, "kind": "ssd", "prio": 5},
                                           {"bytes": 16 * MiB, "kind": "zram", "prio": -1}]
    devs = res["swap_devices"]
    assert [(d["type"], d["kind"], d["prio"]) for d in devs] == [(0, "zram", 5), (1, "ssd", 5), (2, "zram", -2)]
    assert len(res["iterations"][0]["inuse_pages_by_device"]) == 3
    assert "swap device 1 (ssd, 32M, prio 5)" in p.stdout


@pytest.mark.parametrize("policy,pct", [("linux-6.9", 100.0), ("linux-6.10", 100.0), ("nonfull-2024", 100.0),
                                        ("linux-6.12", 100.0), ("linux-6.15", 0.0), ("linux-6.18", 0.0)])
def test_rotational_device_has_no_mthp_before_6_14(policy, pct):
    # up to 6.13 a rotational device has no cluster_info: the HDD scan,
    # order 0 only; the 6.14 lock rework gave it clusters (and mTHP)
    wp = WorkloadParams(workload="thp-swap-v1", iterations=10, device="hdd")
    res, _ = run_model(wp, policy, check=1)
    assert res["summary"]["64"]["mean_fallback_pct"] == pct


def test_rotational_and_solid_state_devices_together():
    # linux-6.12 with an hdd of priority 5 above a zram device: the hdd takes
    # order 0 (no mTHP there), every large folio fails on it (first device only)
    res = run("linux-6.12", swap_prio=1, extra=[(64 * MiB, "hdd", 5)], iterations=5)
    hdd = res["swap_devices"][1]
    assert hdd["kind"] == "hdd" and sum(hdd["alloc_ok"][1:]) == 0 and hdd["alloc_ok"][0] > 0
    assert res["summary"]["64"]["mean_fallback_pct"] == 100.0
