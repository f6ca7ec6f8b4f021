"""The kernel harness (swaplab kernel run / cleanup).

Tests that touch the machine run only as root with zram and the mTHP knobs
(they skip with the missing reason elsewhere). After every one of them the
machine must be as found: no swap active that was not active before, no
zram device the harness made, every mTHP knob at its earlier value. Each
test uses its own state directory (SWAPLAB_STATE_DIR).
"""
import json
import os
import pathlib
import signal
import subprocess
import sys
import time
from contextlib import contextmanager

import pytest

from swaplab.kernel import machine as M
from conftest import ROOT, UNAVAILABLE, needs_kernel  # noqa: F401

SYS = "/sys"


def our_memcgs():
    """The harness's memory cgroups (swaplab-*) that exist now."""
    root = M.DEFAULT_MEMCG_ROOT
    if not os.path.isdir(root):
        return []
    return sorted(d for d in os.listdir(root) if d.startswith(M.MEMCG_PREFIX))


def snapshot():
    zram = {}
    for zid in M.zram_ids(SYS):
        try:
            zram[zid] = M.read_text(f"{SYS}/block/zram{zid}/disksize")
        except OSError:
            zram[zid] = None
    return {"swaps": [s["name"] for s in M.active_swaps()], "zram": zram, "knobs": M.read_knobs(SYS),
            "memcgs": our_memcgs()}


def _no_other_swap():
    sw = M.active_swaps()
    if sw:
        pytest.skip("other swap is active: " + ", ".join(s["name"] for s in sw))


@pytest.fixture
def env(tmp_path):
    e = {"SWAPLAB_STATE_DIR": str(tmp_path / "state")}
    for k in ("SWAPLAB_FAKE_NONROOT", "SWAPLAB_SYSFS_ROOT"):
        os.environ.pop(k, None)
    return e


@pytest.fixture
def machine():
    """The machine before the test; asserts after it that it is unchanged."""
    before = snapshot()
    yield before
    assert snapshot() == before


def one_line(p):
    assert "Traceback" not in p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1, p.stderr
    return lines[0]


def popen(args, env):
    e = dict(os.environ)
    e.update(env)
    return subprocess.Popen([sys.executable, "-m", "swaplab.cli", *args], cwd=ROOT, env=e,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)


@contextmanager
def running(args, env):
    """`swaplab ARGS` in the background; killed and reaped (its pipes read
    and closed) if it is still running when the block ends."""
    p = popen(args, env)
    try:
        yield p
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()


def assert_interrupted(p, err, signo, cmd="run"):
    """The harness (swaplab kernel CMD) ended on signo with the machine restored."""
    assert p.returncode == 128 + signo, err
    assert err.strip() == f"swaplab kernel {cmd}: interrupted by signal {int(signo)}; machine restored"


def wait_for_state(env, proc, driver=False, timeout=30.0):
    path = os.path.join(env["SWAPLAB_STATE_DIR"], M.STATE_NAME)
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        assert proc.poll() is None, proc.communicate()
        if os.path.exists(path):
            if not driver:
                return path
            try:
                with open(path) as f:
                    st = json.load(f)
            except (OSError, ValueError):
                st = {}
            if st.get("driver_pid"):
                return path, st
        time.sleep(0.005)
    raise AssertionError("the state file did not appear")


# ------------------------------------------------------------ anywhere

def test_not_root_refused(cli, env, tmp_path):
    before = snapshot()
    p = cli("kernel", "run", "thp-swap-v1", "--iterations", "1", "--json", str(tmp_path / "r.json"),
            env=dict(env, SWAPLAB_FAKE_NONROOT="1"))
    assert p.returncode == 2
    why = "SWAPLAB_FAKE_NONROOT is set" if os.geteuid() == 0 else f"running as uid {os.geteuid()}"
    assert one_line(p) == ("swaplab kernel run: error: needs root to create a zram device, run swapon "
                           f"and set mTHP knobs ({why})")
    assert p.stdout == ""
    assert not (tmp_path / "r.json").exists()
    assert not os.path.exists(env["SWAPLAB_STATE_DIR"])
    assert snapshot() == before


def test_bad_input_one_line(cli, env):
    p = cli("kernel", "run", "nope", env=env)
    assert p.returncode == 2
    assert one_line(p) == "swaplab kernel run: error: unknown workload 'nope' (known: thp-swap-v1, thp-swap)"
    p = cli("kernel", "run", "thp-swap-v1", "--mthp", "48K", env=env)
    assert p.returncode == 2
    assert one_line(p) == "swaplab kernel run: error: mTHP size 48K is not a power of two"
    p = cli("kernel", "run", "thp-swap-v1", "--policy", "linux-6.18", env=env)
    assert p.returncode == 2
    assert one_line(p) == "swaplab: error: unrecognized arguments: --policy linux-6.18"
    p = cli("kernel", env=env)
    assert p.returncode == 2
    assert one_line(p) == "swaplab kernel: error: the following arguments are required: KCOMMAND"


def test_cleanup_without_state_is_a_noop(cli, env):
    p = cli("kernel", "cleanup", env=env)
    assert p.returncode == 0, p.stderr
    path = os.path.join(env["SWAPLAB_STATE_DIR"], M.STATE_NAME)
    assert p.stdout.strip() == f"nothing to clean up: no state file at {path}"


@pytest.mark.parametrize("cmd", [["kernel"], ["kernel", "run"], ["kernel", "cleanup"], ["compare"],
                                 ["validate"]])
def test_help(cli, cmd):
    p = cli(*cmd, "--help")
    assert p.returncode == 0
    assert p.stdout.startswith("usage: swaplab")


# ------------------------------------------------------------ fake sysfs

def fake_sysfs(root, sizes_kb, value="never"):
    (root / "class" / "zram-control").mkdir(parents=True)
    (root / "class" / "zram-control" / "hot_add").write_text("99\n")
    (root / "class" / "zram-control" / "hot_remove").write_text("")
    for kb in sizes_kb:
        d = root / "kernel" / "mm" / "transparent_hugepage" / f"hugepages-{kb}kB"
        (d / "stats").mkdir(parents=True)
        (d / "enabled").write_text(value)
        for st in ("swpout", "swpout_fallback", "swpin"):
            (d / "stats" / st).write_text("0\n")


def tree(root):
    out = {}
    for dp, _, files in os.walk(root):
        for f in files:
            p = os.path.join(dp, f)
            with open(p) as fh:
                out[os.path.relpath(p, root)] = fh.read()
    return out


@pytest.mark.skipif(os.geteuid() != 0, reason="the root check comes first")
def test_mthp_size_not_offered_refused(cli, env, tmp_path):
    fake = tmp_path / "sys"
    fake_sysfs(fake, [32, 64, 2048])
    files = tree(fake)
    before = snapshot()
    p = cli("kernel", "run", "thp-swap-v1", "--mthp", "16K,64K", "--iterations", "1",
            env=dict(env, SWAPLAB_SYSFS_ROOT=str(fake)))
    assert p.returncode == 2
    assert one_line(p) == (
        "swaplab kernel run: error: the kernel does not offer mTHP size 16K: "
        f"{fake}/kernel/mm/transparent_hugepage/hugepages-16kB/enabled is missing (offered: 32K,64K,2M)")
    assert p.stdout == ""
    assert tree(fake) == files
    assert not os.path.exists(env["SWAPLAB_STATE_DIR"])
    assert snapshot() == before


@pytest.mark.skipif(os.geteuid() != 0, reason="cleanup needs root")
def test_cleanup_undoes_only_what_the_state_names(cli, env, tmp_path):
    fake = tmp_path / "sys"
    fake_sysfs(fake, [16, 32, 64], value="always")
    blk = fake / "block" / "zram7"
    blk.mkdir(parents=True)
    (blk / "reset").write_text("")
    (blk / "disksize").write_text("67108864\n")
    knob16 = str(fake / "kernel/mm/transparent_hugepage/hugepages-16kB/enabled")
    state = {"schema": "swaplab.kernel-state/1", "pid": 999999999, "driver_pid": None,
             "sysfs_root": str(fake), "zram_id": 7, "zram_dev": "/dev/swaplab-test-zram7",
             "node_created": False, "disksize_set": True, "swapon": False,
             "knobs": {knob16: "madvise"}}
    os.makedirs(env["SWAPLAB_STATE_DIR"])
    sp = os.path.join(env["SWAPLAB_STATE_DIR"], M.STATE_NAME)
    with open(sp, "w") as f:
        json.dump(state, f)
    before = snapshot()
    p = cli("kernel", "cleanup", env=env)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == f"restored the machine from {sp}: zram7, 1 mTHP knobs"
    assert (blk / "reset").read_text() == "1"
    assert (fake / "class/zram-control/hot_remove").read_text() == "7"
    assert pathlib.Path(knob16).read_text() == "madvise"
    # not named: left alone
    assert (fake / "kernel/mm/transparent_hugepage/hugepages-32kB/enabled").read_text() == "always"
    assert (fake / "kernel/mm/transparent_hugepage/hugepages-64kB/enabled").read_text() == "always"
    assert not os.path.exists(sp)
    assert snapshot() == before


# ------------------------------------------------------------ the live kernel

@needs_kernel
def test_kernel_run_schema(cli, env, machine, tmp_path):
    _no_other_swap()
    out, lay = tmp_path / "k.json", tmp_path / "k.bin"
    p = cli("kernel", "run", "thp-swap-v1", "--iterations", "3", "--json", str(out), "--layout-dump", str(lay),
            env=env)
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("# kernel kernel-")
    assert "summary 64K: mean fallback" in p.stdout
    r = json.loads(out.read_text())
    assert r["schema"] == "swaplab.result/1"
    assert r["source"] == "kernel" and r["policy"] == f"kernel-{os.uname().release}"
    assert r["workload"] == "thp-swap-v1" and r["sizes_kb"] == [64]
    assert r["params"]["iterations"] == 3
    assert [it["iteration"] for it in r["iterations"]] == [1, 2, 3]
    for it in r["iterations"]:
        s = it["sizes"]["64"]
        assert set(s) == {"swpout", "swpout_fallback", "fallback_pct", "swpin"}
        assert s["swpout"] + s["swpout_fallback"] > 0
        assert len(it["layout_hash"]) == 16
        assert it["swap_type"] >= 0
    assert r["layout"]["npages"] == 15360
    assert lay.stat().st_size == 15360 * 8
    k = r["kernel"]
    assert k["release"] == os.uname().release
    assert k["knobs_before"] == {str(kb): v for kb, v in machine["knobs"].items()}
    assert k["knobs_during"]["64"] == "always"
    assert all(v == "never" for kb, v in k["knobs_during"].items() if kb != "64")
    assert k["zram"]["disksize"] == 64 << 20 and k["zram"]["comp_algorithm"]
    assert int(k["zram"]["id"]) not in machine["zram"]
    assert r["summary"]["64"]["swpout"] > 0
    assert not os.path.exists(os.path.join(env["SWAPLAB_STATE_DIR"], M.STATE_NAME))
    # the model's result of the same parameters compares with it
    m, ml = tmp_path / "m.json", tmp_path / "m.bin"
    cli("run", "thp-swap-v1", "--iterations", "3", "-q", "--json", str(m), "--layout-dump", str(ml), check=True)
    c = cli("compare", str(m), str(out), "--layout-a", str(ml), "--layout-b", str(lay), "--json",
            str(tmp_path / "c.json"))
    assert c.returncode == 0, c.stderr


@needs_kernel
@pytest.mark.parametrize("signo", [signal.SIGTERM, signal.SIGINT])
@pytest.mark.parametrize("when", ["state", "driver", "group"])
def test_signal_restores(env, machine, signo, when):
    """state: as soon as the state file exists (setup); driver: mid-run;
    group: mid-run to the whole process group, driver included (Ctrl-C)."""
    _no_other_swap()
    with running(["kernel", "run", "thp-swap-v1", "--iterations", "100000", "-q"], env) as p:
        wait_for_state(env, p, driver=(when != "state"))
        if when != "state":
            time.sleep(0.2)            # well inside the run
        if when == "group":
            os.killpg(p.pid, signo)
        else:
            p.send_signal(signo)
        _, err = p.communicate(timeout=60)
    assert_interrupted(p, err, signo)
    assert not os.path.exists(os.path.join(env["SWAPLAB_STATE_DIR"], M.STATE_NAME))


def kill9_mid_run(env, args, settle=0.2, cmd="run"):
    """Starts `swaplab kernel CMD ARGS`, kill -9s it settle seconds into the
    driver's run; returns (state path, state). The driver dies with the
    harness (PDEATHSIG)."""
    with running(["kernel", cmd] + args, env) as p:
        path, st = wait_for_state(env, p, driver=True)
        time.sleep(settle)
        p.kill()
        p.communicate()  # reads and closes the pipes
    for _ in range(500):
        if not M.pid_alive(st["driver_pid"]):
            break
        time.sleep(0.01)
    assert not M.pid_alive(st["driver_pid"])
    return path, st


@needs_kernel
def test_kill9_then_cleanup(cli, env, machine):
    _no_other_swap()
    path, st = kill9_mid_run(env, ["thp-swap", "-s", "--iterations", "100000", "-q"])
    # the machine is still changed, and a new run refuses until cleanup
    assert os.path.exists(path)
    assert st["zram_dev"] in [s["name"] for s in M.active_swaps()]
    r = cli("kernel", "run", "thp-swap-v1", "--iterations", "1", env=env)
    assert r.returncode == 2
    assert one_line(r) == ("swaplab kernel run: error: an earlier kernel run did not restore the machine "
                           f"(state file {path}); run 'swaplab kernel cleanup' first")
    assert os.path.isdir(st["tmpdir"])  # the driver's outputs, left by the kill
    c = cli("kernel", "cleanup", env=env)
    assert c.returncode == 0, c.stderr
    nknobs = len(machine["knobs"])
    assert c.stdout.strip() == f"restored the machine from {path}: zram{st['zram_id']}, {nknobs} mTHP knobs"
    assert not os.path.exists(path)
    assert not os.path.exists(st["tmpdir"])
    c = cli("kernel", "cleanup", env=env)
    assert c.returncode == 0 and c.stdout.startswith("nothing to clean up")


@needs_kernel
def test_other_swap_refused_and_allowed(cli, env, tmp_path):
    _no_other_swap()
    zid = int(M.read_text(f"{SYS}/class/zram-control/hot_add"))
    dev = f"/dev/zram{zid}"
    try:
        for _ in range(100):
            if os.path.exists(dev):
                break
            time.sleep(0.01)
        M.write_text(f"{SYS}/block/zram{zid}/disksize", str(8 << 20))
        subprocess.run(["mkswap", dev], check=True, capture_output=True)
        subprocess.run(["swapon", dev], check=True, capture_output=True)
        before = snapshot()
        p = cli("kernel", "run", "thp-swap-v1", "--iterations", "1", "--json", str(tmp_path / "r.json"), env=env)
        assert p.returncode == 2
        assert one_line(p) == (f"swaplab kernel run: error: other swap is active ({dev}); "
                               "swapoff it first or pass --allow-other-swap")
        assert not (tmp_path / "r.json").exists()
        assert snapshot() == before
        # allowed: ours takes the swap-outs (highest priority); the other is left alone
        p = cli("kernel", "run", "thp-swap-v1", "--iterations", "2", "-q", "--allow-other-swap",
                "--json", str(tmp_path / "r.json"), env=env)
        assert p.returncode == 0, p.stderr
        r = json.loads((tmp_path / "r.json").read_text())
        assert r["kernel"]["other_swap"] == [dev]
        assert r["kernel"]["zram"]["device"] != dev
        assert len(r["kernel"]["swap_types_seen"]) == 1
        assert snapshot() == before
        # none of the run's 60 MiB went there; once our device is gone, other
        # processes' pages (docs/kernel-findings.md F5) may land on it
        assert [s["used_kb"] < 1024 for s in M.active_swaps() if s["name"] == dev] == [True]
    finally:
        subprocess.run(["swapoff", dev], capture_output=True)
        M.write_text(f"{SYS}/block/zram{zid}/reset", "1")
        M.write_text(f"{SYS}/class/zram-control/hot_remove", str(zid))
    assert M.active_swaps() == []


@needs_kernel
def test_unusual_knob_values_restored(cli, env, tmp_path):
    """Knobs that were not 'never' before the run get their value back."""
    _no_other_swap()
    orig = M.read_knobs(SYS)
    planted = {16: "madvise", 32: "inherit", 64: "always"}
    try:
        for kb, v in planted.items():
            M.write_text(M.knob_path(kb, SYS), v)
        before = snapshot()
        p = cli("kernel", "run", "thp-swap-v1", "--mthp", "32K", "--iterations", "1", "-q",
                "--json", str(tmp_path / "r.json"), env=env)
        assert p.returncode == 0, p.stderr
        k = json.loads((tmp_path / "r.json").read_text())["kernel"]
        assert {kb: k["knobs_before"][str(kb)] for kb in planted} == planted
        assert k["knobs_during"]["32"] == "always" and k["knobs_during"]["16"] == "never"
        assert k["knobs_during"]["64"] == "never"
        assert snapshot() == before
    finally:
        for kb, v in orig.items():
            M.write_text(M.knob_path(kb, SYS), v)
    assert M.read_knobs(SYS) == orig


@needs_kernel
def test_unavailable_cpu_refused(cli, env, machine):
    bad = max(os.sched_getaffinity(0)) + 1
    p = cli("kernel", "run", "thp-swap-v1", "--cpu", str(bad), env=env)
    assert p.returncode == 2
    allowed = ",".join(map(str, sorted(os.sched_getaffinity(0))))
    assert one_line(p) == (f"swaplab kernel run: error: --cpu {bad} is not available to this process "
                           f"(allowed: {allowed})")


@needs_kernel
def test_several_devices_kill9_then_cleanup(cli, env, machine):
    """Two zram devices of our own: a kill -9 mid-run leaves both swapped on;
    cleanup removes both and the knobs, and the machine is as before."""
    _no_other_swap()
    before = snapshot()
    path, st = kill9_mid_run(env, ["thp-swap-v1", "--swap-size", "32M", "--swap-prio", "5",
                                   "--add-swap", "32M:zram:5", "--iterations", "100000", "-q"])
    devs = [st["zram_dev"]] + [x["zram_dev"] for x in st["extra_zrams"]]
    assert len(devs) == 2
    active = [s["name"] for s in M.active_swaps()]
    assert all(d in active for d in devs)
    c = cli("kernel", "cleanup", env=env)
    assert c.returncode == 0, c.stderr
    ids = [st["zram_id"]] + [x["zram_id"] for x in st["extra_zrams"]]
    nknobs = len(machine["knobs"])
    assert c.stdout.strip() == (f"restored the machine from {path}: zram{ids[0]}, zram{ids[1]}, "
                                f"{nknobs} mTHP knobs")
    assert not M.active_swaps()
    assert snapshot() == before


@needs_kernel
def test_several_devices_refusals(cli, env):
    _no_other_swap()
    before = snapshot()
    p = cli("kernel", "run", "thp-swap-v1", "--add-swap", "32M:ssd", env=env)
    assert p.returncode == 2
    assert one_line(p) == ("swaplab kernel run: error: the kernel harness swaps to zram devices of its own; "
                           "--add-swap ...:ssd is for the model only")
    p = cli("kernel", "run", "thp-swap-v1", "--add-swap", "32M", "--allow-other-swap", env=env)
    assert p.returncode == 2
    assert one_line(p) == ("swaplab kernel run: error: several swap devices need the machine's swap to "
                           "themselves (their swap types must be 0, 1, ...); --allow-other-swap does not apply")
    assert snapshot() == before
