"""The kernel harness's reclaim workloads (swaplab kernel run usemem|pmbench|build).

Live tests (SWAPLAB_KERNEL_TESTS=1, root, zram, the mTHP knobs and a cgroup v1
memory controller) leave the machine as found: no swap, zram device, memory
cgroup or knob value of theirs. They are short: a few MiB under a limit.
"""
import json
import os
import signal
import time

import pytest

from swaplab.kernel import machine as M
from swaplab.kernel.reclaim import other_pages
from conftest import UNAVAILABLE
from test_kernel_harness import assert_interrupted, env, kill9_mid_run, one_line, running  # noqa: F401
from test_kernel_harness import wait_for_state, _no_other_swap  # noqa: F401
from test_kernel_harness import machine, our_memcgs, snapshot  # noqa: F401


def memcg_problem():
    if UNAVAILABLE is not None:
        return UNAVAILABLE
    try:
        M.check_memcg()
    except M.HarnessRefused as e:
        return str(e)
    return None


MEMCG_UNAVAILABLE = memcg_problem()
needs_reclaim = pytest.mark.skipif(MEMCG_UNAVAILABLE is not None,
                                   reason=f"reclaim harness unavailable: {MEMCG_UNAVAILABLE}")


SMALL = ["usemem", "--procs", "2", "--size", "8M", "--limit", "8M", "--swap-size", "32M",
         "--cpus", "2", "--reread", "0", "-q"]
LONG = ["usemem", "--procs", "2", "--size", "16M", "--limit", "8M", "--swap-size", "64M",
        "--reread", "1000", "--cpus", "2", "-q"]


# ------------------------------------------------------------ anywhere

@pytest.mark.parametrize("args,msg", [
    (["usemem", "--procs", "0"], "--procs 0 is outside 1..100000"),
    (["usemem", "-s"], "unrecognized arguments: -s"),
    (["usemem", "--iterations", "5"], "unrecognized arguments: --iterations 5"),
    (["build", "--procs", "3"], "--procs applies to usemem, not build"),
    (["usemem", "--limit", "1M"], "memory limit must be at least 4 MiB"),
    (["usemem", "--size", "6K"], "--size 6K is not a non-zero multiple of 4K"),
    (["usemem", "--policy", "linux-6.18"], "--policy is for the model only; the kernel harness runs this kernel"),
    (["kbuild-v5", "--device", "ssd"],
     "the kernel harness swaps to its own zram device; --device ssd is for the model only"),
    (["usemem", "--procs", "4", "--size", "64M", "--limit", "16M", "--swap-size", "64M"],
     "--swap-size 64M cannot hold what the limit pushes out (4 x 64M - 16M); the workload would be OOM-killed"),
    (["usemem", "--cost", "/nonexistent/cost.json"], None),
    (["usemem", "--window", "-1"], "--window -1 is negative"),
    (["usemem", "--window", "5000"], "--window 5000 is outside 0..4096"),
    (["usemem", "--stat-flush", "-1"], "--stat-flush -1 is negative"),
    (["usemem", "--stat-flush", "x"], "--stat-flush 'x' is not a non-negative integer"),
])
def test_bad_input_one_line_nothing_changed(cli, env, args, msg):
    before = snapshot()
    p = cli("kernel", "run", *args, env=env)
    assert p.returncode == 2, p.stderr
    line = one_line(p)
    assert line.startswith("swaplab kernel run: error: ")
    if msg is not None:
        assert line == f"swaplab kernel run: error: {msg}"
    assert p.stdout == ""
    assert not os.path.exists(env["SWAPLAB_STATE_DIR"])
    assert snapshot() == before


def test_not_root_refused(cli, env):
    before = snapshot()
    p = cli("kernel", "run", "usemem", "--swap-size", "512M", env=dict(env, SWAPLAB_FAKE_NONROOT="1"))
    assert p.returncode == 2
    assert one_line(p).startswith("swaplab kernel run: error: needs root to create a zram device")
    assert not os.path.exists(env["SWAPLAB_STATE_DIR"])
    assert snapshot() == before


@pytest.mark.skipif(UNAVAILABLE is not None, reason=f"the checks before it need the machine: {UNAVAILABLE}")
def test_no_memcg_refused(cli, env, tmp_path):
    _no_other_swap()
    before = snapshot()
    p = cli("kernel", "run", "usemem", "--swap-size", "512M", env=dict(env, SWAPLAB_MEMCG_ROOT=str(tmp_path)))
    assert p.returncode == 2
    assert one_line(p) == (f"swaplab kernel run: error: no cgroup v1 memory controller at {tmp_path} "
                           "(cgroup.procs is missing); the reclaim workloads need one")
    assert snapshot() == before


def _state_with_memcg(env, memcg):
    os.makedirs(env["SWAPLAB_STATE_DIR"])
    sp = os.path.join(env["SWAPLAB_STATE_DIR"], M.STATE_NAME)
    st = M.State(sp)
    st.data.update({"pid": 999999999, "memcg": str(memcg)})
    st.save()
    return sp


@pytest.mark.skipif(os.geteuid() != 0, reason="cleanup needs root")
def test_cleanup_removes_the_recorded_memcg_only(cli, env, tmp_path):
    fake = tmp_path / "memory"
    fake.mkdir()
    (fake / "memory.limit_in_bytes").write_text("9223372036854771712\n")
    ours = fake / "swaplab-4242"
    ours.mkdir()
    sibling = fake / "swaplab-4243"
    sibling.mkdir()
    sp = _state_with_memcg(env, ours)
    c = cli("kernel", "cleanup", env=env)
    assert c.returncode == 0, c.stderr
    assert c.stdout.strip() == f"restored the machine from {sp}: memory cgroup swaplab-4242"
    assert not ours.exists() and sibling.exists()
    assert not os.path.exists(sp)


@pytest.mark.skipif(os.geteuid() != 0, reason="cleanup needs root")
def test_cleanup_leaves_a_foreign_cgroup_alone(cli, env, tmp_path):
    fake = tmp_path / "memory"
    (fake / "user.slice").mkdir(parents=True)
    (fake / "memory.limit_in_bytes").write_text("9223372036854771712\n")
    sp = _state_with_memcg(env, fake / "user.slice")
    c = cli("kernel", "cleanup", env=env)
    assert c.returncode == 1
    assert one_line(c) == (f"swaplab kernel cleanup: error: could not restore everything: "
                           f"{fake / 'user.slice'} is not a swaplab memory cgroup; left alone")
    assert (fake / "user.slice").is_dir() and os.path.exists(sp)


# ------------------------------------------------------------ live

@needs_reclaim
def test_usemem_swaps_out_and_the_slots_agree(cli, env, machine, tmp_path):
    """2 x 8M written under an 8M limit: reclaim pushes pages out; at its exit
    every written page of a process is resident or swapped (pagemap), no
    process holds more than the limit, each swapped page is on its own slot of
    our device (type 0), and no more pages are on swap than were written to
    it. (Each process's layout is taken at its own exit, while the other may
    still run: the limit bounds each, not their sum; the phase-layout test
    checks the sum at a barrier.)"""
    _no_other_swap()
    out = tmp_path / "r.json"
    lay = tmp_path / "l.bin"
    p = cli("kernel", "run", *SMALL, "--json", str(out), "--layout-dump", str(lay), env=env)
    assert p.returncode == 0, p.stderr
    r = json.loads(out.read_text())
    assert r["schema"] == "swaplab.reclaim-result/1" and r["source"] == "kernel"
    assert r["params"]["nr_procs"] == 2 and r["params"]["limit_pages"] == 2048
    # the model's parameters for the same options, field for field
    from swaplab import reclaim as model
    a = model.build_parser().parse_args(SMALL)
    prm, _ = model.params_from_args(a)
    assert r["params"] == prm
    c = r["counters"]
    pages = 2 * 2048
    assert [x["label"] for x in r["layouts"]] == ["exit", "exit"]
    for x in r["layouts"]:
        assert x["present"] + x["swapped"] == x["npages"] == 2048
        assert x["distinct_slots"] == x["swapped"]
    swapped = r["layout"]["swapped_at_exit"]
    assert all(x["present"] <= 2048 for x in r["layouts"])
    assert 0 < swapped <= c["vmstat"]["pswpout"]
    assert c["vmstat"]["pswpout"] >= pages - 2048 - 64   # the limit holds 2048 pages (page tables aside)
    order_sum = c["order0"]["swpout"] + sum(d.get("swpout", 0) * int(kb) // 4 for kb, d in c["sizes"].items())
    assert order_sum == c["vmstat"]["pswpout"]
    assert c["sizes"]["64"]["swpout"] > 0
    assert r["kernel"]["memcg"]["max_usage_in_bytes"] <= 8 << 20
    # kernel memory: at least the page tables (a PTE table per 2 MiB touched)
    assert 2 * 4 <= r["kernel"]["memcg"]["kmem.max_usage_in_bytes"] // 4096 <= 64
    assert r["kernel"]["memcg"]["oom_kill"] == 0
    # tick-sampled accounting: a short run may show 0 s
    assert r["time"]["sys_seconds"] >= 0 and len(r["time"]["per_process"]) == 2
    assert r["cost"]["measured_sys_seconds"] == r["time"]["sys_seconds"]
    assert r["cost"]["measured_cpu_seconds"] == round(r["time"]["sys_seconds"] + r["time"]["user_seconds"], 6)
    assert r["cost"]["predicted_sys_seconds"] > 0
    assert r["sizes"]["64"]["swpout"] == c["sizes"]["64"]["swpout"]
    assert r["pages"]["swapped_out"] == c["vmstat"]["pswpout"]
    import array
    v = array.array("Q", lay.read_bytes())
    slots = [x for x in v if x != 0xFFFFFFFFFFFFFFFF]
    assert len(slots) == swapped
    # each process's layout is taken at its own exit: a slot the first one
    # freed may hold a page of the second, so slots are distinct per process
    for x in r["layouts"]:
        own = [e for e in v[x["first"]:x["first"] + x["npages"]] if e != 0xFFFFFFFFFFFFFFFF]
        assert len(set(own)) == len(own) == x["swapped"]
    assert {x >> 48 for x in slots} == {0}
    assert max(x & 0xFFFFFFFFFFFF for x in slots) < (32 << 20) // 4096


@needs_reclaim
def test_mixed_pages_reach_zram_compressible_about_2_to_1(cli, env, machine, tmp_path):
    """--page-content mixed: the driver writes whole pages that zram must
    really compress (F33). The same run with one-byte pages peaks at a
    fraction of the memory, and only the prediction's content differs."""
    _no_other_swap()
    res = {}
    for c in ("byte", "mixed"):
        out = tmp_path / f"{c}.json"
        p = cli("kernel", "run", *SMALL, "--page-content", c, "--json", str(out), env=env)
        assert p.returncode == 0, p.stderr
        res[c] = json.loads(out.read_text())
        assert res[c]["cost"]["page_content"] == c
    mm = {c: r["kernel"]["zram"]["mm_stat"] for c, r in res.items()}
    # every process has exited (a page or two may still sit in the swap cache): the peak is the measure
    peak_pages = {c: mm[c]["mem_used_max"] / 4096 for c in mm}
    out_pages = res["mixed"]["pages"]["swapped_out"]
    # at least 2048 pages are out at once (2 x 8M in an 8M limit); 2:1 pages take
    # about half a page each, one-byte pages a few bytes
    assert peak_pages["mixed"] > 2048 / 3 and peak_pages["mixed"] < out_pages
    assert peak_pages["byte"] < peak_pages["mixed"] / 4
    assert res["mixed"]["cost"]["model"]["swpout_page"] == res["byte"]["cost"]["model"]["swpout_page"] + 5609.0


@needs_reclaim
@pytest.mark.parametrize("signo", [signal.SIGTERM, signal.SIGINT])
def test_signal_removes_the_memcg(env, machine, signo):
    _no_other_swap()
    with running(["kernel", "run", *LONG], env) as p:
        path, st = wait_for_state(env, p, driver=True)
        assert st["memcg"] and os.path.basename(st["memcg"]) in our_memcgs()
        time.sleep(0.5)
        assert M.memcg_pids(st["memcg"])        # the workload runs in it
        p.send_signal(signo)
        _, err = p.communicate(timeout=60)
    assert_interrupted(p, err, signo)
    assert not os.path.exists(path)
    assert our_memcgs() == []


@needs_reclaim
def test_kill9_then_cleanup_removes_the_memcg(cli, env, machine):
    _no_other_swap()
    path, st = kill9_mid_run(env, LONG, settle=0.5)
    name = os.path.basename(st["memcg"])
    assert name in our_memcgs()
    assert st["zram_dev"] in [s["name"] for s in M.active_swaps()]
    c = cli("kernel", "cleanup", env=env)
    assert c.returncode == 0, c.stderr
    nknobs = len(machine["knobs"])
    assert c.stdout.strip() == (f"restored the machine from {path}: zram{st['zram_id']}, "
                                f"memory cgroup {name}, {nknobs} mTHP knobs")
    assert our_memcgs() == []
    assert os.path.basename(st["tmpdir"]).startswith("swaplab-reclaim-")
    assert not os.path.exists(st["tmpdir"])


@needs_reclaim
def test_oom_kill_is_an_error_and_the_machine_is_restored(cli, env, machine):
    """16M written in a 4M memory cgroup with 4M of swap cannot fit: the
    cgroup's OOM killer takes the process; the run says so (exit 1) and
    leaves nothing behind."""
    _no_other_swap()
    p = cli("kernel", "run", "pmbench", "--procs", "1", "--cpus", "1", "--wss", "16M", "--limit", "4M",
            "--swap-size", "4M", "--accesses", "100", "--mthp", "none", "-q", env=env)
    assert p.returncode == 1, p.stderr
    assert one_line(p).startswith("swaplab kernel run: error: the reclaim driver failed (exit 1): "
                                  "swaplab-rdriver: process 0 (pid ")
    assert "was killed by signal 9 (the memory cgroup's OOM killer?" in p.stderr
    assert not os.path.exists(os.path.join(env["SWAPLAB_STATE_DIR"], M.STATE_NAME))


@needs_reclaim
def test_phase_layouts_and_counters_per_phase(cli, env, machine, tmp_path):
    """--phase-layouts: every running process's layout at each PHASE marker
    (SETUP before the write: nothing mapped is touched yet; RUN after it:
    the limit has pushed pages out), then at exit; the phases' swap-outs add
    up to the run's."""
    _no_other_swap()
    out = tmp_path / "r.json"
    p = cli("kernel", "run", *SMALL[:-3], "--reread", "1", "--phase-layouts", "-q", "--json", str(out), env=env)
    assert p.returncode == 0, p.stderr
    r = json.loads(out.read_text())
    labels = [(x["label"], x["phase"], x["proc"]) for x in r["layouts"]]
    assert labels == [("phase", 0, 0), ("phase", 0, 1), ("phase", 1, 0), ("phase", 1, 1),
                      ("exit", -1, 0), ("exit", -1, 1)]
    setup = [x for x in r["layouts"] if x["phase"] == 0]
    assert all(x["swapped"] == 0 and x["present"] == 0 for x in setup)
    run = [x for x in r["layouts"] if x["phase"] == 1]
    assert sum(x["swapped"] for x in run) >= 2 * 2048 - 2048 - 64
    assert all(x["present"] + x["swapped"] == 2048 for x in run)
    assert [ph["until"] for ph in r["phases"]] == ["phase 0", "phase 1", "end"]
    assert sum(ph["vmstat"]["pswpout"] for ph in r["phases"]) == r["counters"]["vmstat"]["pswpout"]
    # our device's slots in use (/proc/swaps) hold at least the workload's
    # swapped pages; before the write only another task's can be there
    # (kernel-findings F36)
    assert r["phases"][0]["vmstat"]["pswpout"] == r["phases"][0]["other_pages"]
    assert r["phases"][1]["swap_used_pages"] == sum(x["swapped"] for x in run) + r["phases"][1]["other_pages"]
    assert all(ph.get("other_pages", 0) >= 0 for ph in r["phases"])
    assert "swap_used_pages" in r["phases"][-1] and "other_pages" not in r["phases"][-1]  # no layouts at the end
    assert all(x["swap_used_pages"] >= x["swapped"] for x in r["layouts"])


def _kernel_and_model(cli, env, tmp_path, args, kernel_only):
    """The kernel's result of `args` + `kernel_only`, and the model's of
    `args`."""
    _no_other_swap()
    k, m = tmp_path / "k.json", tmp_path / "m.json"
    p = cli("kernel", "run", *args, *kernel_only, "--json", str(k), env=env)
    assert p.returncode == 0, p.stderr
    p = cli("run", *args, "--json", str(m))
    assert p.returncode == 0, p.stderr
    return json.loads(k.read_text()), json.loads(m.read_text())


def _dumped_run(cli, args, js, dump, *extra, env=None):
    """The result of `swaplab run` (env None) or `swaplab kernel run` of
    `args` + `extra`, writing its JSON to js and its layout dump to dump."""
    cmd = ("run",) if env is None else ("kernel", "run")
    p = cli(*cmd, *args, *extra, "--json", str(js), "--layout-dump", str(dump), **({} if env is None else {"env": env}))
    assert p.returncode == 0, p.stderr
    return json.loads(js.read_text())


def _records(res):
    """A result's layout records: (label, phase, proc, first, npages) each."""
    return [(x["label"], x["phase"], x["proc"], x["first"], x["npages"]) for x in res["layouts"]]


@needs_reclaim
def test_window_1_runs_the_stream_serially_and_agrees_with_the_model(cli, env, machine, tmp_path):
    """--window 1: one operation in flight at a time, as the model executes
    the stream. Four usemem processes on two CPUs with 64K then agree with
    the model within 5 % in 4K and 64K swap-outs; with the default window
    (two processes at once) the kernel swaps out 10-16 % fewer 4K pages
    (kernel-findings F17)."""
    args = ["usemem", "--procs", "4", "--size", "8M", "--limit", "16M", "--reread", "1", "--mthp", "64K",
            "--seed", "1", "--swap-size", "256M", "--cpus", "2", "-q"]
    kr, mr = _kernel_and_model(cli, env, tmp_path, args, ["--window", "1"])
    assert kr["harness"]["window"] == 1
    for kb in ("4", "64"):
        assert abs(mr["sizes"][kb]["swpout"] - kr["sizes"][kb]["swpout"]) <= 0.05 * kr["sizes"][kb]["swpout"], kb


@needs_reclaim
def test_failed_large_charges_at_fault_and_at_swap_in_agree_with_the_model(cli, env, machine, tmp_path):
    """A large folio's failed charge, counted apart at a fault
    (anon_fault_fallback_charge: `charge_fallback`) and at a swap-in
    (`swpin_fallback_charge`), for four usemem processes with every size,
    serially. The kernel ends in one of a few outcomes from run to run
    (16K: 35, 38, 39 or 41 failed charges at a fault; kernel-findings F37);
    the model's counts are one of them at every size exactly, and no kernel
    run is further than 20 % (6 folios at the least) from them."""
    args = ["usemem", "--procs", "4", "--size", "8M", "--limit", "16M", "--reread", "1",
            "--mthp", "16K,32K,64K,128K,256K,512K,1M,2M", "--seed", "1", "--swap-size", "256M",
            "--cpus", "2", "-q"]
    sizes = ("4", "16", "32", "64", "128", "256", "512", "1024", "2048")
    whats = ("charge_fallback", "swpin_fallback_charge")
    seen = []
    for attempt in range(10):
        kr, mr = _kernel_and_model(cli, env, tmp_path, args, ["--window", "1", "--stat-flush", "1"])
        counts = {(kb, w): (mr["sizes"][kb][w], kr["sizes"][kb][w]) for kb in sizes for w in whats}
        for (kb, w), (m, k) in counts.items():
            assert abs(m - k) <= max(6, 0.2 * k), (attempt, kb, w, m, k)
        seen.append({key: k for key, (m, k) in counts.items()})
        if all(m == k for m, k in counts.values()):
            break
    else:
        raise AssertionError(f"the model's counts are none of 10 kernel runs': {seen}")
    assert mr["sizes"]["4"]["swpin_fallback_charge"] == 0
    # a swap-in is never PMD-sized (alloc_swap_folio() tries orders below PMD)
    assert mr["sizes"]["2048"]["swpin_fallback_charge"] == 0
    assert mr["sizes"]["128"]["swpin_fallback_charge"] > 100


@needs_reclaim
def test_stat_flush_keeps_the_statistics_current_and_pmbench_agrees_with_the_model(cli, env, machine, tmp_path):
    """--stat-flush 16: the driver reads the group's memory.stat before
    every 16th operation (80192 of them: 5012 reads), so reclaim's list
    sizes and the workingset's are current, as the model's are; pmbench's
    refault activations, scans and deactivations then agree with the
    model's (kernel-findings F28: 5118-5261 activated, model 5191 since F41's
    object stocks, 5156 before; without
    the flush a run this short may never deactivate, F18). On kernel build
    6.18.44-fc-v1045 about one run in three is of another kind, 5866-5946
    activated and 1000 fewer pages scanned, with the driver before F37's
    change as after it (F37); the kernel runs again, up to four times,
    until a run is of the first kind."""
    args = ["pmbench", "--procs", "2", "--wss", "24M", "--limit", "32M", "--accesses", "40000", "--mthp", "none",
            "--swap-size", "256M", "--cpus", "2", "--seed", "1", "-q"]
    for attempt in range(4):
        kr, mr = _kernel_and_model(cli, env, tmp_path, args, ["--stat-flush", "16"])
        if abs(kr["reclaim"]["workingset_activate"] - 5191) <= 0.15 * 5191:
            break
    assert kr["harness"]["stat_flush"] == 16 and kr["harness"]["stat_reads"] == 5012
    assert mr["reclaim"]["workingset_activate"] == 5191
    kw, mw = kr["reclaim"], mr["reclaim"]
    assert abs(kw["workingset_activate"] - 5191) <= 0.15 * 5191
    assert abs(kw["pgscan"] - mw["pgscan"]) <= 0.05 * mw["pgscan"]
    assert abs(kw["pgdeactivate"] - mw["pgdeactivate"]) <= 0.10 * mw["pgdeactivate"]
    assert abs(kr["sizes"]["4"]["swpout"] - mr["sizes"]["4"]["swpout"]) <= 0.02 * mr["sizes"]["4"]["swpout"]


@needs_reclaim
def test_a_serial_build_read_every_operation_swaps_as_the_model(cli, env, machine, tmp_path):
    """kernel-findings F29: a three-job build on one CPU, serially, with the
    group's statistics read before every operation (`--stat-flush 1`),
    deactivates and swaps out as the model does (model 568 pages, 1848
    deactivated; kernel 503-569 and 1800-1888). Read every 16th operation
    the kernel's runs fell into another kind (2720-2741 pages) in five of
    six: which kind a build run takes depends on how stale the statistics
    were when reclaim read them. On kernel build 6.18.44-fc-v1045 about
    one run in ten is of another kind even so (495-528 or 2082 pages
    deactivated; kernel-findings F38); on fc-v1252 three to five runs in
    eight, whether the driver is pinned to the children's CPU, to the other
    one or not at all (421-492 or 2127-2549; F41), so the kernel runs
    again, up to twelve times, until a run deactivates within 10 % of the
    model."""
    args = ["build", "--jobs", "3", "--generations", "2", "--limit", "32M", "--size-median", "8M",
            "--size-max", "32M", "--size-min", "1M", "--mthp", "none", "--seed", "2", "--cpus", "1",
            "--swap-size", "256M", "--window", "1", "-q"]
    for attempt in range(12):
        kr, mr = _kernel_and_model(cli, env, tmp_path, args, ["--stat-flush", "1"])
        if abs(kr["reclaim"]["pgdeactivate"] - 1848) <= 0.10 * 1848:
            break
    assert kr["harness"]["stat_flush"] == 1
    assert mr["sizes"]["4"]["swpout"] == 568 and mr["reclaim"]["pgdeactivate"] == 1848
    assert abs(kr["sizes"]["4"]["swpout"] - 568) <= 0.15 * 568
    assert abs(kr["reclaim"]["pgdeactivate"] - 1848) <= 0.10 * 1848


@needs_reclaim
def test_a_serial_build_with_exits_repeats_exactly(cli, env, machine, tmp_path):
    """kernel-findings F40: a serial build of twelve processes that exit
    one after another (j4/32M 64K, seed 2) repeats its counts. Before F40's
    driver fixes eight runs gave eight results (4K swap-outs 4733-5349):
    whether a region's last PTE table was its own depended on the address
    layout, the page tables of an exited process were uncharged an RCU
    grace period later (tens of operations), and an exited process's
    acknowledgement pipe lived on in later children. On kernel build
    fc-v1045 every run gave the same counts; on fc-v1252 four runs in six
    do (4K 4620 out, 9084 in; the others 9164 in, or 4708 out: F41), so the
    kernel runs until two runs agree, at most six times."""
    _no_other_swap()
    args = ["build", "--jobs", "4", "--generations", "3", "--limit", "32M", "--size-median", "6M",
            "--size-max", "32M", "--size-min", "1M", "--mthp", "64K", "--seed", "2", "--window", "1",
            "--stat-flush", "1", "--swap-size", "256M", "-q"]
    got = []
    for i in range(6):
        out = tmp_path / f"k{i}.json"
        p = cli("kernel", "run", *args, "--json", str(out), env=env)
        assert p.returncode == 0, p.stderr
        res = json.loads(out.read_text())
        assert res["harness"]["rcu_barrier"] is True
        assert res["harness"]["driver_cpu"] == 0
        got.append(({kb: (s["swpout"], s["swpin"]) for kb, s in res["sizes"].items()},
                    res["reclaim"]["pgscan"], res["reclaim"]["pgsteal"]))
        if len(set(map(repr, got))) < len(got):
            break
    assert len(set(map(repr, got))) < len(got), got


@needs_reclaim
def test_usemem_with_every_size_activates_whole_2m_folios_while_writing(cli, env, machine, tmp_path):
    """kernel-findings F29: four usemem processes with every mTHP size on
    two CPUs. Reclaim activates 0 to 3 of the 7 folios that faulted at 2M
    while their processes still write them (scanned young twice, R7); the
    write's pgactivate is that many times 512 (a system-wide counter: a few
    pages of other processes' may join), and an activated 2M folio is
    never swapped out. How many is up to the two CPUs' interleaving: the
    kernel's runs come in these kinds; the model with two at once is the
    kind of one folio (4K swap-outs 348 against the kind's 339.5)."""
    _no_other_swap()
    args = ["usemem", "--procs", "4", "--size", "8M", "--limit", "16M", "--reread", "1",
            "--mthp", "16K,32K,64K,128K,256K,512K,1M,2M", "--seed", "1", "--swap-size", "256M",
            "--cpus", "2", "-q"]
    k, m = tmp_path / "k.json", tmp_path / "m.json"
    p = cli("kernel", "run", *args, "--stat-flush", "16", "--json", str(k), env=env)
    assert p.returncode == 0, p.stderr
    kr = json.loads(k.read_text())
    act = next(ph for ph in kr["phases"] if ph["until"] == "phase 1")["vmstat"]["pgactivate"]
    folios = round(act / 512)
    assert 0 <= folios <= 3 and abs(act - 512 * folios) <= 32, act
    assert kr["sizes"]["2048"]["swpout"] + folios in (7, 8)
    p = cli("run", *args, "--reread", "0", "--window", "0", "--json", str(m))
    assert p.returncode == 0, p.stderr
    assert json.loads(m.read_text())["reclaim"]["pgactivate"] == 512


@needs_reclaim
@pytest.mark.parametrize("size,limit,mthp,run_hash,whole", [
    ("32M", "16M", "64K", "f432998bb227c9c0", True),
    ("32M", "16M", "16K,32K,64K,128K,256K,512K,1M,2M", "2b9ac3fb286fd774", True),
    ("48M", "16M", "64K", "c0f9400b6109ec3e", True),
    ("32M", "8M", "64K", "8117f24c768c6c17", True),
    ("32M", "16M", "none", "e34a4de6232ac0cb", True),
    ("32M", "16M", "2M", "0b25a100d8e14754", True),
    ("64M", "24M", "16K,64K", "bab1581742d0461c", True),
])
def test_one_pinned_usemem_process_swaps_slot_for_slot_as_the_model(cli, env, machine, tmp_path, size, limit,
                                                                    mthp, run_hash, whole):
    """Issue 13's stretch: one usemem process pinned to one CPU, serially.
    At the RUN marker (its whole write done) every page is on the same
    slot on the kernel as in the model: the layout dumps of both are
    byte-identical there, and so are their run layout hashes; where
    `whole`, also at its exit, after the re-read. The pinned hash is the
    model's (kernel-findings F26). The kernel reads its statistics before
    every operation (`--stat-flush 1`): with them as of the last periodic
    flush, three settings part from the model (F36, part 6). Even so the
    kernel's layout differs in a few runs of a hundred, so the kernel runs
    again, up to three times, until one agrees."""
    _no_other_swap()
    args = ["usemem", "--procs", "1", "--size", size, "--limit", limit, "--reread", "1", "--mthp", mthp,
            "--swap-size", "256M", "--cpus", "1", "--seed", "1", "--window", "1", "-q"]
    k, kb, m, mb = tmp_path / "k.json", tmp_path / "k.bin", tmp_path / "m.json", tmp_path / "m.bin"
    mr = _dumped_run(cli, args, m, mb)
    assert mr["run_layout_hash"] == run_hash
    for attempt in range(3):
        kr = _dumped_run(cli, args, k, kb, "--stat-flush", "1", "--phase-layouts", env=env)
        assert _records(kr) == _records(mr)
        run = next(x for x in kr["layouts"] if x["phase"] == 1)
        span = slice(0, 8 * (run["first"] + run["npages"]))   # the SETUP and RUN records
        agree = kr["run_layout_hash"] == run_hash and kb.read_bytes()[span] == mb.read_bytes()[span]
        if whole:
            agree = agree and kb.read_bytes() == mb.read_bytes() and kr["layout"]["hash"] == mr["layout"]["hash"]
        # another task's pages on our device move every later slot (F5,
        # F36 part 5): such a run says nothing of the model
        if agree and not other_pages(kr):
            break
    assert not other_pages(kr), f"another task put {other_pages(kr)} pages on our swap device in each of 3 runs"
    assert kr["run_layout_hash"] == run_hash
    assert kb.read_bytes()[span] == mb.read_bytes()[span]
    if whole:
        assert kb.read_bytes() == mb.read_bytes()
        assert kr["layout"]["hash"] == mr["layout"]["hash"]


@needs_reclaim
@pytest.mark.parametrize("procs,size,mthp,run_hash", [
    (4, "8M", "64K", "50568e5b8cd89b8d"),
    (4, "8M", "16K,32K,64K,128K,256K,512K,1M,2M", "fecdac85d47dee55"),
    (2, "16M", "64K", "2793d05e6751fcc7"),
])
def test_several_usemem_processes_on_two_cpus_serially_swap_slot_for_slot_as_the_model(cli, env, machine, tmp_path,
                                                                                       procs, size, mthp, run_hash):
    """Several usemem processes, each pinned to one of two CPUs, serially
    (`--window 1`, `--stat-flush 1`): every page of every process is on the
    same slot on the kernel as in the model through the whole run, the
    layout dumps byte-identical. It holds since the driver's children pin
    themselves before they join the group and an EXIT waits for every
    operation in flight (kernel-findings F37); before, 8-56 pages a process
    differed in the write and 960-1024 at exit. One kernel run in two to
    six still charges a page on the other CPU's stock and parts from the
    model by 7-56 pages (F37), so the kernel runs again, up to six times,
    until one agrees. With 4K pages only the kernel does not repeat
    itself, and the model does not claim it."""
    _no_other_swap()
    args = ["usemem", "--procs", str(procs), "--size", size, "--limit", "16M", "--reread", "1", "--mthp", mthp,
            "--swap-size", "256M", "--cpus", "2", "--seed", "1", "--window", "1", "-q"]
    k, kb, m, mb = tmp_path / "k.json", tmp_path / "k.bin", tmp_path / "m.json", tmp_path / "m.bin"
    mr = _dumped_run(cli, args, m, mb)
    assert mr["run_layout_hash"] == run_hash
    assert [x["proc"] for x in mr["layouts"] if x["label"] == "exit"] == list(range(procs))
    for attempt in range(6):
        kr = _dumped_run(cli, args, k, kb, "--stat-flush", "1", "--phase-layouts", env=env)
        if kb.read_bytes() == mb.read_bytes() and not other_pages(kr):
            break
    assert not other_pages(kr), f"another task put {other_pages(kr)} pages on our swap device"
    assert _records(kr) == _records(mr)
    assert kr["run_layout_hash"] == run_hash
    assert kb.read_bytes() == mb.read_bytes()
    assert kr["layout"]["hash"] == mr["layout"]["hash"]


def test_other_pages_are_the_device_s_slots_less_the_workload_s():
    """swap_use() (no kernel): /proc/swaps' Used column at a phase less the
    pages the phase's layout records hold swapped; none without the
    driver's --swap-dev or at a snapshot with no layout. other_pages():
    the most of them, or at a lone process's exit."""
    from swaplab.kernel.reclaim import swap_use
    recs = [{"label": "phase", "phase": 1, "swapped": 100}, {"label": "phase", "phase": 1, "swapped": 20},
            {"label": "exit", "phase": -1, "swapped": 7}]
    assert swap_use({"label": "phase", "phase": 1, "swap_used_kb": 4 * 126}, recs) == \
        {"swap_used_pages": 126, "other_pages": 6}
    assert swap_use({"label": "end", "phase": -1, "swap_used_kb": 0}, recs) == {"swap_used_pages": 0}
    assert swap_use({"label": "phase", "phase": 1}, recs) == {}
    assert swap_use({"label": "phase", "phase": 1, "swap_used_kb": -1}, recs) == {}
    res = {"phases": [{"other_pages": 0}, {}], "processes": 1,
           "layouts": [{"label": "exit", "swapped": 7, "swap_used_pages": 9}]}
    assert other_pages(res) == 2
    assert other_pages(dict(res, processes=2)) == 0


def test_kernel_run_warns_of_other_pages(monkeypatch, tmp_path, capsys):
    """`swaplab kernel run usemem ...` (the run itself faked: no kernel)
    warns in one line when a phase found pages on the device that are not
    the workload's, and is silent when none did."""
    from swaplab import kernel
    from swaplab.kernel import reclaim
    phases = [{"until": "phase 0", "other_pages": 0}, {"until": "phase 1", "other_pages": 6}, {"until": "end"}]
    monkeypatch.setattr(reclaim, "run_kernel", lambda p: ({"phases": phases, "processes": 2, "layouts": []}, b""))
    out = tmp_path / "r.json"
    argv = ["usemem", "--procs", "1", "--size", "8M", "--limit", "4M", "-q", "--json", str(out)]
    assert kernel.main_run_reclaim(argv) == 0
    assert capsys.readouterr().err == (
        "swaplab kernel run: warning: at phase 1 the device held pages that are not the workload's (another "
        "process swapped onto it); the slots after it may differ from a quiet machine\n")
    phases[1]["other_pages"] = 0
    assert kernel.main_run_reclaim(argv) == 0
    assert capsys.readouterr().err == ""


def test_f35_stored_runs_give_the_documented_means():
    """docs/data/kbuild-v5-14m-6.18-f35.json (kernel-findings F35): ten kernel
    runs (seeds 1-5, twice), none OOM-killed; their means per size and the
    model's, as the finding's table gives them (no kernel needed; the model
    rows regenerated with kernel-findings F38's model)."""
    import statistics
    from conftest import ROOT
    with open(os.path.join(ROOT, "docs", "data", "kbuild-v5-14m-6.18-f35.json")) as f:
        d = json.load(f)
    sizes = ("16", "32", "64", "128", "256", "512", "1024", "2048")

    def means(runs):   # as the finding's table prints them (the script's rounding, then one decimal)
        return [float(f"{round(statistics.mean(r['sizes'][kb]['fallback_pct'] for r in runs), 2):.1f}")
                for kb in sizes]
    assert [(k["seed"], k["repeat"]) for k in d["kernel"]] == [(s, r) for r in (0, 1) for s in range(1, 6)]
    assert all(k["oom_kill"] == 0 for k in d["kernel"])
    assert means(d["kernel"]) == [0.6, 0.2, 0.1, 0.2, 4.8, 8.6, 20.7, 19.3]
    assert means(d["model"]["linux-6.18 window 0"]) == [0.8, 0.3, 0.1, 0.2, 4.9, 10.9, 20.3, 20.4]
    assert means(d["model"]["proposal-holes-first window 0"]) == [0.0, 0.1, 0.0, 0.0, 0.1, 0.3, 2.1, 2.6]
    # proposal-compact revision 4 and kcompact on its step
    assert means(d["model"]["proposal-compact window 0"]) == [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.8, 2.8]
    assert means(d["model"]["proposal-kcompact window 0"]) == [0.0, 0.0, 0.0, 0.0, 0.0, 0.1, 0.4, 2.6]
    # within 2.3 pp at 512K and 1.1 pp at every other size
    diff = [abs(a - b) for a, b in zip(means(d["kernel"]), means(d["model"]["linux-6.18 window 0"]))]
    assert round(diff[5], 1) == 2.3 and max(diff[:5] + diff[6:]) < 1.15


def test_f40_stored_runs_repeat_as_the_finding_says():
    """kernel-findings F40 (no kernel needed): the stored runs of the serial
    build before and after the driver fixes, and the two pairs of serial
    agreement runs, read by docs/experiments/repeat-runs.py."""
    import subprocess
    import sys
    from conftest import ROOT
    data = os.path.join(ROOT, "docs", "data")
    for label, distinct, out4k in (("before", 8, [4817, 4733, 5182, 5226, 4988, 4815, 5349, 4886]),
                                   ("after", 1, [4583] * 8)):
        with open(os.path.join(data, "f40", f"repeat-build-{label}.json")) as f:
            k = json.load(f)["kernel"]
        assert k["label"] == label and k["distinct"] == distinct
        assert [r["sizes"]["4"][0] for r in k["runs"]] == out4k
        assert all(r["rcu_barrier"] is (label == "after") for r in k["runs"])
    g = os.path.join(data, "reclaim-agreement-6.18-f40")
    p = subprocess.run([sys.executable, os.path.join(ROOT, "docs", "experiments", "repeat-runs.py"),
                        "--agreement", f"{g}-before-a.json,{g}-before-b.json",
                        "--agreement", f"{g}-a.json,{g}-b.json"],
                       capture_output=True, text=True, check=True)
    lines = p.stdout.splitlines()
    assert lines[0].endswith("kernel repeats 59 of 90; model exact 41 and 36")
    assert lines[7].endswith("kernel repeats 71 of 90; model exact 41 and 43")
    assert "  build j4/64M           repeats 14/15  model exact 12, 12" in lines
    assert "  usemem 4x16M/32M       repeats 14/15  model exact 10, 10" in lines
