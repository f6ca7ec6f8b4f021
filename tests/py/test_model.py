"""The model through Python: result schema, determinism, invariants, layout."""
import json
import struct

import pytest

from swaplab import _core
from swaplab.model import run_model
from swaplab.params import WorkloadParams
from swaplab.results import SCHEMA


def test_result_schema_and_summary():
    wp = WorkloadParams(workload="thp-swap-v1", iterations=5, small_folios=True)
    res, layout = run_model(wp)
    assert res["schema"] == SCHEMA and res["source"] == "model" and res["policy"] == "linux-6.18"
    assert res["params"]["seed"] == 1 and res["params"]["mthp_sizes"] == ["64K"]
    assert len(res["iterations"]) == 5
    it = res["iterations"][0]
    assert set(it["sizes"]["64"]) == {"swpout", "swpout_fallback", "fallback_pct", "swpin"}
    assert len(it["layout_hash"]) == 16
    # region A (60M) then B (1M): one uint64 per page
    assert len(layout) == (15360 + 256) * 8
    assert res["layout"]["hash"] == f"{_core.layout_hash(layout):016x}"
    assert res["layout"]["hash"] == res["iterations"][-1]["layout_hash"]
    s = res["summary"]["64"]
    assert s["swpout"] == sum(i["sizes"]["64"]["swpout"] for i in res["iterations"])
    json.dumps(res)


def test_same_seed_same_run_other_seed_other_layout():
    a, la = run_model(WorkloadParams(workload="thp-swap", iterations=3, seed=7))
    b, lb = run_model(WorkloadParams(workload="thp-swap", iterations=3, seed=7))
    c, lc = run_model(WorkloadParams(workload="thp-swap", iterations=3, seed=8))
    assert la == lb and a["iterations"] == b["iterations"]
    assert la != lc


def test_layout_dump_offsets_are_slots_or_all_ones():
    wp = WorkloadParams(workload="thp-swap-v1", iterations=2)
    res, layout = run_model(wp)
    vals = struct.unpack(f"<{len(layout) // 8}Q", layout)
    swapped = [v for v in vals if v != 0xFFFFFFFFFFFFFFFF]
    assert swapped and all(1 <= v < 16384 for v in swapped)
    assert len(set(swapped)) == len(swapped)  # no slot owned twice
    # first iteration: the first large folio lands at 512 (cluster 0 holds the header)
    assert min(swapped) == 512


def test_invariants_hold_after_every_operation():
    for wl, opts in (("thp-swap-v1", {"small_folios": True}), ("thp-swap", {"small_folios": True})):
        wp = WorkloadParams(workload=wl, iterations=4, **opts)
        res, _ = run_model(wp, check=2)
        assert res["invariant_checks"] > 1000


def test_glibc_rng_replays_the_published_picks():
    """Iteration 1 of thp-swap-v1 with --rng glibc swaps out exactly the chunks
    that glibc's unseeded rand() % 960 picks, in address order from slot 512."""
    import ctypes
    libc = ctypes.CDLL(None)
    libc.srand(1)
    chunks = sorted({libc.rand() % 960 for _ in range(256)})
    wp = WorkloadParams(workload="thp-swap-v1", iterations=1, rng="glibc")
    res, layout = run_model(wp)
    vals = struct.unpack(f"<{len(layout) // 8}Q", layout)
    for k, c in enumerate(chunks):
        assert vals[c * 16:(c + 1) * 16] == tuple(range(512 + 16 * k, 528 + 16 * k))
    swapped = sum(v != 0xFFFFFFFFFFFFFFFF for v in vals)
    assert swapped == 16 * len(chunks)
    assert res["iterations"][0]["sizes"]["64"]["swpout"] == len(chunks)


def test_device_size_not_a_multiple_of_a_cluster():
    wp = WorkloadParams(workload="thp-swap", iterations=2, swap_bytes=(128 << 20) + 4096 * 3)
    res, _ = run_model(wp, check=1)
    assert res["device"]["max_slots"] == 32768 + 3


@pytest.mark.parametrize("policy", [p["name"] for p in _core.policies()])
def test_every_policy_runs_every_workload_with_checks(policy):
    for wl in _core.workloads():
        wp = WorkloadParams(workload=wl, iterations=3, small_folios=True)
        res, _ = run_model(wp, policy, check=1)
        assert len(res["iterations"]) == 3


def test_slot_cache_slots_are_named_cache_held():
    """Issue 10: in a slot-cache generation the slots in use beyond the
    regions' pages are the caches', not other processes' pages."""
    from swaplab.model import run_model
    from swaplab.params import WorkloadParams
    res, _ = run_model(WorkloadParams(workload="thp-swap-v1", small_folios=True, iterations=3), "linux-6.12")
    assert "first_other_pages_iteration" not in res
    assert res["first_cache_held_iteration"] == 1
    assert all(it["cache_held_pages"] > 0 for it in res["iterations"])
    res, _ = run_model(WorkloadParams(workload="thp-swap-v1", small_folios=True, iterations=3), "linux-6.18")
    assert res["first_cache_held_iteration"] is None


def _avoidable(policy, **opts):
    """Per-order sums over a run: fallbacks (order 0: failed slots), and of
    those the ones counted while >= 2^order slots were free and while a
    naturally aligned free run of 2^order existed."""
    from swaplab.params import params_from_options
    wp = params_from_options(opts.pop("workload", "thp-swap-v1"), policy, **opts)
    its = _core.run(policy=policy, metrics=False, **dict(wp.core_kwargs(), seed=1))["iterations"]
    fb = [sum(it["swpout_fallback"][o] for it in its) for o in range(10)]
    fb[0] = sum(it["alloc_fail0"] for it in its)
    return (fb, [sum(it["fail_free"][o] for it in its) for o in range(10)],
            [sum(it["fail_aligned"][o] for it in its) for o in range(10)])


@pytest.mark.parametrize("policy", [p["name"] for p in _core.policies()])
def test_avoidable_failures_are_a_subset_of_the_failures(policy):
    """Overfull and mixed sizes: aligned <= free <= all, order by order; a
    policy that finds any aligned free run (first-fit, buddy, noncontig)
    never fails while one exists, and noncontig, which takes any free
    slots, never fails while 2^order of them are free."""
    fb, free, aligned = _avoidable(policy, swap_size="48M", mthp="16K,64K,256K", small_folios=True,
                                   iterations=20)
    assert all(a <= f <= n for a, f, n in zip(aligned, free, fb))
    assert fb[0] > 0 and fb[4] > 0
    if policy in ("first-fit", "buddy", "noncontig"):
        assert aligned == [0] * 10
    if policy == "noncontig":
        assert free == [0] * 10


def test_avoidable_failures_golden_linux_6_18():
    """Issue 11's overfull cells: every order-0 failure of 6.18 is with the
    device full, while most of its 64K fallbacks had an aligned free 64K
    range on the device; proposal-compact's had none."""
    fb, free, aligned = _avoidable("linux-6.18", swap_size="48M", mthp="16K,64K,256K")
    assert (fb[0], free[0], aligned[0]) == (289489, 0, 0)
    assert (fb[4], free[4], aligned[4]) == (16880, 12437, 11334)
    assert (fb[6], free[6], aligned[6]) == (16, 14, 3)
    fb, free, aligned = _avoidable("proposal-compact", swap_size="48M", mthp="16K,64K,256K")
    # revision 5 (untouched ends spared): 291346 and 13 before; compact's
    # revision 2 (half a 256K window may move): 291154 and 4486 / 20 before
    assert (fb[0], free[0], aligned[0]) == (291346, 0, 0)
    # revision 4 (the hand-off): 4495 and 22 before; compact's revision 4
    # (half a 16K-64K window may move): 4487 / 14 before
    assert (fb[4], free[4], aligned[4]) == (4481, 8, 0)
