"""swaplab kernel move-cost: a swap-entry move's copy timed on a zram block
device of its own (docs/kernel-findings.md F32).

The live tests (SWAPLAB_KERNEL_TESTS=1, root, zram) leave the machine as
found: no zram device of theirs, no state file. The timings themselves are
not asserted (no timed tests); the device's own account of what it stored
is.
"""
import json
import os
import signal

import pytest

from swaplab.kernel import machine as M
from conftest import needs_kernel  # noqa: F401
from test_kernel_harness import assert_interrupted, env, kill9_mid_run, one_line, running  # noqa: F401
from test_kernel_harness import wait_for_state, _no_other_swap  # noqa: F401
from test_kernel_harness import machine, snapshot  # noqa: F401


@pytest.mark.parametrize("args, msg", [
    (["--content", "same,foo"], "--content: unknown content 'foo' (known: same, byte, mixed, random)"),
    (["--content", "byte,byte"], "--content: a content is named twice"),
    (["--slots", "1001"], "--slots 1001 must be even (half the blocks hold a page)"),
    (["--slots", "2"], "--slots 2 is out of range (4..4194304)"),
    (["--moves", "5"], "--moves 5 is out of range (10..10000000)"),
    (["--repeats", "0"], "--repeats 0 is out of range (1..100)"),
    (["--cpu", "-1"], "--cpu -1 is not a CPU number"),
])
def test_bad_input_one_line(cli, env, args, msg, tmp_path):
    before = snapshot()
    p = cli("kernel", "move-cost", *args, "--json", str(tmp_path / "r.json"), env=env)
    assert p.returncode == 2
    assert one_line(p) == f"swaplab kernel move-cost: error: {msg}"
    assert not (tmp_path / "r.json").exists()
    assert not os.path.exists(env["SWAPLAB_STATE_DIR"])
    assert snapshot() == before


def test_not_root_refused(cli, env, tmp_path):
    before = snapshot()
    p = cli("kernel", "move-cost", "--json", str(tmp_path / "r.json"),
            env=dict(env, SWAPLAB_FAKE_NONROOT="1"))
    assert p.returncode == 2
    why = "SWAPLAB_FAKE_NONROOT is set" if os.geteuid() == 0 else f"running as uid {os.geteuid()}"
    assert one_line(p) == ("swaplab kernel move-cost: error: needs root to create a zram device, run "
                           f"swapon and set mTHP knobs ({why})")
    assert p.stdout == ""
    assert not (tmp_path / "r.json").exists()
    assert not os.path.exists(env["SWAPLAB_STATE_DIR"])
    assert snapshot() == before


@needs_kernel
def test_run_measures_and_restores(cli, env, machine, tmp_path):
    """Every content on its own fresh device; zram's mm_stat says what each
    content is (same-filled, compressible, incompressible); the device was
    never swap and is gone afterwards."""
    _no_other_swap()
    out = tmp_path / "mc.json"
    p = cli("kernel", "move-cost", "--slots", "1024", "--moves", "2000", "--repeats", "2", "--seed", "7",
            "--json", str(out), "-q", env=env)
    assert p.returncode == 0, p.stderr
    assert p.stdout == "" and p.stderr == ""
    r = json.loads(out.read_text())
    assert r["schema"] == "swaplab.move-cost/1"
    assert r["params"] == {"contents": ["same", "byte", "mixed", "random"], "slots": 1024, "moves": 2000,
                           "repeats": 2, "seed": 7, "cpu": 0}
    # alternating rounds, each a fresh device, the repeat's seed its own
    assert [(x["content"], x["repeat"], x["seed"]) for x in r["runs"]] == \
        [(c, k, 7 + k) for k in (0, 1) for c in ("same", "byte", "mixed", "random")]
    for x in r["runs"]:
        assert int(x["zram"]["id"]) not in machine["zram"]
        assert x["zram"]["disksize"] == 1024 * 4096
        assert x["slots"] == 1024 and x["moves"] == 2000
        fill, end = x["mm_stat_filled"], x["mm_stat_end"]
        # half the blocks hold a page, before and after the moves
        assert fill["orig_data_size"] == end["orig_data_size"] == 512 * 4096
        for st in ("read", "write", "discard", "empty_read"):
            d = x["steps_ns"][st]
            assert 0 < d["p10"] <= d["median"] <= d["p90"]
    s = r["summary"]
    assert s["same"]["same_pages"] == 512 and s["same"]["compression"] is None
    assert s["random"]["huge_pages"] == 512 and s["random"]["compression"] == 1.0
    assert s["byte"]["same_pages"] == 0 and s["byte"]["compression"] > 50
    assert 1.5 < s["mixed"]["compression"] < 3
    for c in s.values():
        assert c["move"] == round(c["read"] + c["write"] + c["discard"], 1)
        assert c["repeats"] == 2
    assert not os.path.exists(os.path.join(env["SWAPLAB_STATE_DIR"], M.STATE_NAME))


@needs_kernel
@pytest.mark.parametrize("signo", [signal.SIGTERM, signal.SIGINT])
def test_signal_restores(env, machine, signo):
    _no_other_swap()
    with running(["kernel", "move-cost", "--moves", "10000000", "--content", "mixed", "-q"], env) as p:
        path, st = wait_for_state(env, p, driver=True)
        assert st["zram_dev"] and not st["swapon"]       # a block device, never swap
        p.send_signal(signo)
        _, err = p.communicate(timeout=60)
    assert_interrupted(p, err, signo, cmd="move-cost")
    assert not os.path.exists(path)


@needs_kernel
def test_kill9_then_cleanup(cli, env, machine):
    _no_other_swap()
    path, st = kill9_mid_run(env, ["--moves", "10000000", "--content", "mixed", "-q"], cmd="move-cost")
    assert os.path.exists(path)
    assert M.read_text(f"/sys/block/zram{st['zram_id']}/disksize") != "0"
    c = cli("kernel", "cleanup", env=env)
    assert c.returncode == 0, c.stderr
    assert c.stdout.strip() == f"restored the machine from {path}: zram{st['zram_id']}"
    assert os.path.basename(st["tmpdir"]).startswith("swaplab-movecost-")
    assert not os.path.exists(st["tmpdir"])


def test_f32_summary_is_the_runs_own():
    """The stored F32 measurement: its summary is summarize() of its runs,
    and it holds the figures kernel-findings.md F32 and proposal-compact.md
    quote (µs: move of each content, the 2:1 page's extra write and read)."""
    from conftest import ROOT
    from swaplab.kernel import movecost
    with open(os.path.join(ROOT, "docs", "data", "kernel-move-cost-6.18-f32.json")) as f:
        r = json.load(f)
    assert r["params"] == {"contents": ["same", "byte", "mixed", "random"], "slots": 8192,
                           "moves": 100000, "repeats": 5, "seed": 1, "cpu": 0}
    s = movecost.summarize(r["runs"])
    assert s == r["summary"]
    assert {c: s[c]["move"] for c in s} == {"same": 3835.0, "byte": 4957.0, "mixed": 13831.0,
                                            "random": 6640.0}
    # the cost model's extra for mixed pages (kernel-findings F33) is this measurement
    from swaplab.reclaim import MIXED_PAGE_EXTRA_NS
    assert MIXED_PAGE_EXTRA_NS == {"swpout_page": s["mixed"]["write"] - s["byte"]["write"],
                                   "swpin_page": s["mixed"]["read"] - s["byte"]["read"]}
    assert MIXED_PAGE_EXTRA_NS == {"swpout_page": 5609.0, "swpin_page": 3215.0}
    assert s["mixed"]["compression"] == 2.066
