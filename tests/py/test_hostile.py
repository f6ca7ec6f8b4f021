"""Hostile input (issue 14): every command and option, tried as a careless or
malicious user would. Bad input ends with exit code 2 and one line on
stderr, no traceback, and nothing outside the named outputs touched; an
output is only ever a regular file or a new path, written whole or not at
all; Ctrl-C and SIGTERM keep the finished iterations.

Most cases run in-process through swaplab.cli.main (fast); signals, closed
pipes and full streams run the real command. The kernel commands run with
SWAPLAB_FAKE_NONROOT set, so that nothing can reach the live kernel even if
a case were accepted by mistake.
"""
import errno
import gc
import json
import os
import signal
import stat
import subprocess
import sys
import threading
import time

import pytest

from swaplab import _core, bench, golden, results
from swaplab.cli import main
from swaplab.params import ParamError

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HUGE = "9" * 5000                 # over Python's 4300-digit int() limit
AT_LIMIT = "9" * 4300
NEWLINE = "64M\nrm -rf"


@pytest.fixture
def work(tmp_path, monkeypatch):
    """A scratch directory as the working directory; the kernel commands
    can never touch the machine."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SWAPLAB_FAKE_NONROOT", "1")
    return tmp_path


def snapshot(d) -> dict:
    """Every entry under d: type, mode, size, mtime and (files) contents."""
    out = {}
    for base, dirs, files in os.walk(d):
        for n in dirs + files:
            p = os.path.join(base, n)
            st = os.lstat(p)
            data = None
            if stat.S_ISREG(st.st_mode):
                with open(p, "rb") as f:
                    data = f.read()
            elif stat.S_ISLNK(st.st_mode):
                data = os.readlink(p)
            out[os.path.relpath(p, d)] = (stat.S_IFMT(st.st_mode), st.st_mode, st.st_size,
                                          st.st_mtime_ns, data)
    return out


def sl(capsys, *args):
    """swaplab ARGS in-process: (exit code, stdout, stderr)."""
    try:
        rc = main(list(args))
    except SystemExit as e:
        rc = e.code
    out, err = capsys.readouterr()
    return rc, out, err


def assert_refused(capsys, d, args, want=None):
    """ARGS end with exit 2, one line on stderr (equal to or containing
    want), no traceback, nothing printed, nothing under d changed."""
    before = snapshot(d)
    rc, out, err = sl(capsys, *args)
    lines = err.splitlines()
    assert rc == 2, (args, rc, err)
    assert len(lines) == 1 and err.endswith("\n"), err
    assert "Traceback" not in err
    assert len(lines[0]) < 400, lines[0][:500]
    assert out == ""
    if want is not None:
        assert want in lines[0], lines[0]
    assert snapshot(d) == before
    return lines[0]


# ------------------------------------------------------------------ every option

WORKLOAD_SIZE_OPTS = ["--swap-size", "--region-a-size", "--region-b-size"]
WORKLOAD_COUNT_OPTS = ["--iterations", "--seed", "--cpu", "--cpus", "--migrate-every", "--swap-prio"]
WORKLOAD_OPTS = WORKLOAD_SIZE_OPTS + WORKLOAD_COUNT_OPTS + ["--mthp", "--add-swap", "--policy",
                                                          "--rng", "--device", "--region-offset"]

CMDS = {
    "run": ["run", "thp-swap-v1", "-q"],
    "history": ["history", "thp-swap-v1", "--policies", "linux-6.18"],
    "kernel run": ["kernel", "run", "thp-swap-v1", "-q"],
}


def _value_cases():
    cases = []
    for cmd, base in CMDS.items():
        for opt in WORKLOAD_OPTS:
            if opt == "--policy" and cmd != "run":
                continue
            for label, val in (("huge", HUGE), ("at-limit", AT_LIMIT), ("newline", NEWLINE),
                               ("empty", ""), ("negative", "-1"), ("words", "lots")):
                cases.append((f"{cmd} {opt} {label}", base + [opt, val]))
    more = [
        ("run --check huge", ["run", "thp-swap-v1", "-q", "--check", HUGE]),
        ("run --check newline", ["run", "thp-swap-v1", "-q", "--check", "1\n2"]),
        ("run --format bad", ["run", "thp-swap-v1", "-q", "--format", "x" * 3000]),
        ("run workload huge", ["run", "x" * 5000, "-q"]),
        ("run workload newline", ["run", "thp-swap-v1\nx", "-q"]),
        ("history --policies huge", ["history", "thp-swap-v1", "--policies", "p" * 5000]),
        ("history --policies newline", ["history", "thp-swap-v1", "--policies", "linux-6.18\nx"]),
        ("history --policies empty", ["history", "thp-swap-v1", "--policies", ""]),
        ("validate --iterations huge", ["validate", "--iterations", HUGE]),
        ("validate --iterations newline", ["validate", "--iterations", "3\n4"]),
        ("validate --retries huge", ["validate", "--iterations", "3", "--retries", HUGE]),
        ("golden --policy newline", ["golden", "--policy", "linux-6.18\nx", "--check"]),
        ("golden --policy huge", ["golden", "--policy", "p" * 5000, "--check"]),
        ("golden --dir newline", ["golden", "--dir", "no\nwhere", "--check"]),
        ("golden --dir empty", ["golden", "--dir", "", "--check"]),
        ("golden --kernel --dir missing", ["golden", "--kernel", "--dir", "missing"]),
        ("compare A missing", ["compare", "missing.json", "missing.json"]),
        ("compare A newline", ["compare", "a\nb.json", "b.json"]),
        ("compare A empty", ["compare", "", "b.json"]),
    ]
    for opt in ("--sizes", "--fills", "--orders", "--pairs", "--runs", "--seed", "--policy"):
        for label, val in (("huge", HUGE), ("at-limit", AT_LIMIT), ("newline", "1\n2"), ("empty", ""),
                           ("negative", "-1"), ("words", "lots")):
            more.append((f"bench alloc {opt} {label}", ["bench", "alloc", opt, val]))
    for opt in ("--threads", "--orders", "--mix", "--fill", "--size", "--ops", "--seed", "--policy",
                "--victims"):
        for label, val in (("huge", HUGE), ("at-limit", AT_LIMIT), ("newline", "1\n2"), ("empty", ""),
                           ("negative", "-1"), ("words", "lots")):
            more.append((f"bench threads {opt} {label}", ["bench", "threads", opt, val]))
    return cases + more


VALUE_CASES = _value_cases()


@pytest.mark.parametrize("args", [a for _, a in VALUE_CASES], ids=[n for n, _ in VALUE_CASES])
def test_bad_value_one_line(capsys, work, args):
    line = assert_refused(capsys, work, args)
    assert HUGE[:100] not in line and AT_LIMIT[:100] not in line   # at most a short prefix echoed


OUTPUT_OPTS = [
    ("run", ["run", "thp-swap-v1", "-q", "--iterations", "1"], ["--json", "--layout-dump"]),
    ("kernel run", ["kernel", "run", "thp-swap-v1", "-q", "--iterations", "1"], ["--json", "--layout-dump"]),
    ("history", ["history", "thp-swap-v1", "--policies", "linux-6.18", "--iterations", "1"],
     ["--json", "--plot"]),
    ("bench alloc", ["bench", "alloc", "--sizes", "64M", "--pairs", "10", "--runs", "0"], ["--json"]),
    ("bench threads", ["bench", "threads", "--policy", "linux-6.18", "--threads", "1", "--size", "64M",
                       "--ops", "10", "--orders", "0", "--fill", "50"], ["--json", "--plot"]),
    ("validate", ["validate", "--iterations", "1"], ["--json"]),
]
OUTPUT_CASES = [(f"{name} {opt}", base, opt) for name, base, opts in OUTPUT_OPTS for opt in opts]


def _target(work, kind, opt):
    """A path of `kind` (a new path's name ends as the option wants)."""
    name = "out.svg" if opt == "--plot" else "out.json"
    p = work / name
    if kind == "chardev":
        os.mknod(p, 0o600 | stat.S_IFCHR, os.makedev(1, 3))
    elif kind == "symlink":
        (work / "victim").write_text("precious\n")
        os.symlink("victim", p)
    elif kind == "fifo":
        os.mkfifo(p)
    elif kind == "directory":
        p = work / ("dir.svg" if opt == "--plot" else "dir.json")
        p.mkdir()
    elif kind == "empty":
        return ""
    elif kind == "no-directory":
        return str(work / "missing" / name)
    return str(p)


# --region-offset (issue 10): the exact one-line message of each bad offset
REGION_OFFSET_CASES = [
    ("1000", "--region-offset 1000 is not a multiple of 4K"),
    ("6K", "--region-offset 6K is not a multiple of 4K"),
    ("64K,100", "--region-offset 100 is not a multiple of 4K"),
    ("2M", "--region-offset 2M is not below 2M (it is the address modulo 2M)"),
    ("0,2048K", "--region-offset 2048K is not below 2M (it is the address modulo 2M)"),
    ("3M", "--region-offset 3M is not below 2M (it is the address modulo 2M)"),
    ("-4K", "--region-offset -4K is negative"),
    ("64K,-64K", "--region-offset -64K is negative"),
    ("lots", "--region-offset 'lots' is not an offset (examples: 0, 1472K, 1M,64K, aslr)"),
    ("4K,", "--region-offset '4K,' is not an offset (examples: 0, 1472K, 1M,64K, aslr)"),
    ("0x1000", "--region-offset '0x1000' is not an offset (examples: 0, 1472K, 1M,64K, aslr)"),
    ("64Q", "--region-offset '64Q' is not a size (examples: 64M, 16K, 2G)"),
    ("4K,8K,12K", "--region-offset '4K,8K,12K' names more than two regions (A[,B] or aslr)"),
]


@pytest.mark.parametrize("cmd", list(CMDS))
@pytest.mark.parametrize("val,want", REGION_OFFSET_CASES, ids=[c[0] for c in REGION_OFFSET_CASES])
def test_bad_region_offset_exact_message(capsys, work, cmd, val, want):
    line = assert_refused(capsys, work, CMDS[cmd] + [f"--region-offset={val}"])
    assert line.endswith(want), line


@pytest.mark.skipif(os.geteuid() != 0, reason="mknod of a character device needs root")
@pytest.mark.parametrize("kind", ["chardev", "symlink", "fifo", "directory", "empty", "no-directory"])
@pytest.mark.parametrize("name,base,opt", OUTPUT_CASES, ids=[c[0] for c in OUTPUT_CASES])
def test_output_refuses_non_regular(capsys, work, name, base, opt, kind):
    path = _target(work, kind, opt)
    want = {"chardev": "it is a character device, not a regular file",
            "symlink": "it is a symbolic link, not a regular file",
            "fifo": "it is a FIFO, not a regular file",
            "directory": "it is a directory, not a regular file",
            "empty": f"{opt} '' names no file",
            "no-directory": "does not exist"}[kind]
    assert_refused(capsys, work, base + [opt, path], want)


# ------------------------------------------------------------------ 1, 2: the writer

def test_json_leaves_existing_tmp_and_writes_whole(capsys, work):
    (work / "r.json.tmp").write_text("someone else's\n")
    (work / "r.json").write_text("old\n")
    os.chmod(work / "r.json", 0o640)
    rc, _, err = sl(capsys, "run", "thp-swap-v1", "-q", "--iterations", "2", "--json", "r.json",
                    "--layout-dump", "r.bin")
    assert rc == 0, err
    assert (work / "r.json.tmp").read_text() == "someone else's\n"
    assert sorted(os.listdir(work)) == ["r.bin", "r.json", "r.json.tmp"]   # no temporary left
    assert stat.S_IMODE(os.stat(work / "r.json").st_mode) == 0o640           # its mode kept
    res = results.load_result("r.json")
    assert res["complete"] is True and res["stopped_by"] is None
    assert len((work / "r.bin").read_bytes()) == 8 * res["layout"]["npages"]


def test_writer_refuses_at_write_time(work):
    """A path that became a symbolic link after the check is still refused."""
    (work / "victim").write_text("precious\n")
    os.symlink("victim", work / "late.json")
    with pytest.raises(ParamError, match="symbolic link"):
        results.write_json(str(work / "late.json"), {"a": 1})
    assert (work / "victim").read_text() == "precious\n"


def test_interrupted_write_keeps_old_file(work, monkeypatch):
    """A failure between writing and renaming leaves the old file whole and
    no temporary behind (2: the layout dump was truncated in place)."""
    (work / "l.bin").write_bytes(b"old layout")

    def boom(fd):
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(results.os, "fsync", boom)
    with pytest.raises(OSError) as e:
        results.write_layout(str(work / "l.bin"), b"\0" * 4096)
    assert e.value.filename == str(work / "l.bin")
    assert (work / "l.bin").read_bytes() == b"old layout"
    assert os.listdir(work) == ["l.bin"]


def test_sigterm_during_write_waits_for_the_rename(work, monkeypatch):
    """SIGTERM while the file is written is held until it is in place."""
    (work / "l.bin").write_bytes(b"old layout")
    seen = []
    real_fsync = os.fsync

    def fsync_and_signal(fd):
        # to the main thread: a process-directed signal may be taken by
        # another thread (a process pool's), which no mask of ours holds
        signal.pthread_kill(threading.main_thread().ident, signal.SIGTERM)
        real_fsync(fd)
    monkeypatch.setattr(results.os, "fsync", fsync_and_signal)

    class Term(Exception):
        pass

    def handler(signo, frame):
        seen.append(sorted(os.listdir(work)))
        raise Term()
    old = signal.signal(signal.SIGTERM, handler)
    try:
        with pytest.raises(Term):
            results.write_layout(str(work / "l.bin"), b"\1" * 4096)
    finally:
        signal.signal(signal.SIGTERM, old)
    assert seen == [["l.bin"]]                     # delivered after the rename, nothing else left
    assert (work / "l.bin").read_bytes() == b"\1" * 4096


def test_layout_dump_through_symlink_refused(capsys, work):
    (work / "victim").write_bytes(b"precious")
    os.symlink("victim", work / "l.bin")
    assert_refused(capsys, work, ["run", "thp-swap-v1", "-q", "--iterations", "1", "--layout-dump", "l.bin"],
                   "cannot write --layout-dump 'l.bin': it is a symbolic link, not a regular file")


def test_golden_write_refuses_symlink(capsys, work):
    (work / "victim").write_text("x")
    os.symlink("victim", work / "linux-6.18.json")
    assert_refused(capsys, work, ["golden", "--dir", ".", "--policy", "linux-6.18"],
                   "cannot write golden file './linux-6.18.json': it is a symbolic link")


# ------------------------------------------------------------------ 3, 12.6: stop and live output

def test_core_stops_between_iterations_on_signal():
    """A signal during the run (here sent from the second iteration's
    report) stops it after that iteration, with both kept."""
    seen = []

    def on_iter(i, it):
        seen.append(i)
        if i == 2:
            os.kill(os.getpid(), signal.SIGINT)
        return False
    # Python's own handler, whatever the shell that started pytest left
    # (a background job starts with SIGINT ignored)
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        raw = _core.run(workload="thp-swap-v1", iterations=50, on_iter=on_iter, catch_signals=True)
        assert raw["stopped"] is True and raw["stop_signal"] == signal.SIGINT
        assert seen == [1, 2] and len(raw["iterations"]) == 2
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # put back
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(5)
    finally:
        signal.signal(signal.SIGINT, before)
    # the layout is the one after iteration 2
    full = _core.run(workload="thp-swap-v1", iterations=2)
    assert raw["layout"] == full["layout"]
    assert raw["iterations"] == full["iterations"]


def test_core_stops_inside_long_checks():
    """SIGTERM while a large device's invariant check runs stops the run
    there: the finished iterations are kept."""
    def on_iter(i, it):
        if i == 1:
            threading.Timer(0.02, os.kill, (os.getpid(), signal.SIGTERM)).start()
        return False
    raw = _core.run(workload="thp-swap-v1", iterations=100000, swap_bytes=64 << 30, check=1,
                    on_iter=on_iter, catch_signals=True)
    assert raw["stopped"] is True and raw["stop_signal"] == signal.SIGTERM
    assert 1 <= len(raw["iterations"]) < 100000


def test_on_iter_true_stops_and_exception_propagates():
    raw = _core.run(workload="thp-swap-v1", iterations=10, on_iter=lambda i, it: i == 3)
    assert raw["stopped"] is True and raw["stop_signal"] is None and len(raw["iterations"]) == 3

    def bad(i, it):
        raise ValueError("from the hook")
    with pytest.raises(ValueError, match="from the hook"):
        _core.run(workload="thp-swap-v1", iterations=10, on_iter=bad)


def _popen(*args, **kw):
    return subprocess.Popen([sys.executable, "-m", "swaplab.cli", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=kw.pop("cwd", ROOT), **kw)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_run_signal_keeps_finished_iterations(tmp_path, sig):
    """Each iteration is printed as it finishes; a signal stops the run
    within an iteration, and the result file holds the finished ones."""
    out = tmp_path / "r.json"
    p = _popen("run", "thp-swap-v1", "--iterations", "100000", "--json", str(out))
    lines = [p.stdout.readline() for _ in range(5)]       # header, column heads, 3 iterations
    assert lines[2].split()[0] == "1" and lines[4].split()[0] == "3"
    p.send_signal(sig)
    rest, err = p.communicate(timeout=120)
    assert p.returncode == 128 + sig
    name = signal.Signals(sig).name
    res = results.load_result(str(out))
    n = len(res["iterations"])
    assert res["complete"] is False and res["stopped_by"] == name and 3 <= n < 100000
    assert err == (f"swaplab run: stopped by {name} after {n} of 100000 iterations; the result file "
                   "holds them (complete: false)\n")
    assert "summary 64K" in rest
    assert os.listdir(tmp_path) == ["r.json"]


def test_published_format_lines(cli):
    p = cli("run", "thp-swap-v1", "--iterations", "3", "--format", "published", check=True)
    assert p.stdout.splitlines() == [
        "Iteration 1: swpout inc: 217, swpout fallback inc: 0, Fallback percentage: 0.00%",
        "Iteration 2: swpout inc: 227, swpout fallback inc: 0, Fallback percentage: 0.00%",
        "Iteration 3: swpout inc: 227, swpout fallback inc: 0, Fallback percentage: 0.00%"]


def test_published_format_falls_back_like_the_program(cli):
    """Percentages as the program prints them; 0/0 is nan (printf of a C
    division), several sizes add the size."""
    p = cli("run", "thp-swap-v1", "--iterations", "40", "--format", "published", "--mthp", "16K,64K",
            "--swap-size", "48M", "-s", check=True)
    lines = p.stdout.splitlines()
    assert len(lines) == 80
    assert lines[0].startswith("Iteration 1: swpout inc: 0, swpout fallback inc: 0, Fallback percentage: "
                               "nan% (16K)")
    res = json.loads(subprocess.run([sys.executable, "-m", "swaplab.cli", "run", "thp-swap-v1",
                                     "--iterations", "40", "--mthp", "16K,64K", "--swap-size", "48M",
                                     "-s", "--json", "-"], capture_output=True, text=True, cwd=ROOT).stdout)
    for it in res["iterations"]:
        s = it["sizes"]["64"]
        tot = s["swpout"] + s["swpout_fallback"]
        pct = f"{100.0 * s['swpout_fallback'] / tot:.2f}" if tot else "nan"
        assert (f"Iteration {it['iteration']}: swpout inc: {s['swpout']}, swpout fallback inc: "
                f"{s['swpout_fallback']}, Fallback percentage: {pct}% (64K)") in lines


def test_closed_pipe_ends_quietly(tmp_path):
    p = _popen("run", "thp-swap-v1", "--iterations", "100000")
    p.stdout.readline()
    p.stdout.close()
    err = p.stderr.read()
    p.stderr.close()
    p.wait(timeout=120)
    assert p.returncode == 0 and err == ""


def test_closed_pipe_still_writes_the_files(tmp_path):
    p = _popen("run", "thp-swap-v1", "--iterations", "300", "--json", str(tmp_path / "r.json"))
    p.stdout.readline()
    p.stdout.close()
    err = p.stderr.read()
    p.stderr.close()
    p.wait(timeout=120)
    assert p.returncode == 0 and err == ""
    res = results.load_result(str(tmp_path / "r.json"))
    assert res["complete"] is True and len(res["iterations"]) == 300


# ------------------------------------------------------------------ 4: binding leak

def test_no_leak_per_iteration():
    kw = dict(workload="thp-swap-v1", iterations=200, swap_bytes=32 << 20,
              extra_swap=[(32 << 20, "zram", -1)])
    _core.run(**kw)
    gc.collect()
    before = sum(1 for o in gc.get_objects() if type(o) is list)
    for _ in range(3):
        r = _core.run(**kw)
        assert len(r["iterations"][0]["dev_inuse"]) == 2
        del r
    gc.collect()
    after = sum(1 for o in gc.get_objects() if type(o) is list)
    assert after - before < 10, after - before


# ------------------------------------------------------------------ 5: numbers

@pytest.mark.parametrize("opt", WORKLOAD_SIZE_OPTS + WORKLOAD_COUNT_OPTS)
def test_long_number_message(capsys, work, opt):
    line = assert_refused(capsys, work, ["run", "thp-swap-v1", "-q", opt, HUGE])
    assert line == (f"swaplab run: error: {opt} '{'9' * 32}...' is too long (5000 characters; "
                    "at most 40)")


def test_newline_value_one_line(capsys, work):
    line = assert_refused(capsys, work, ["run", "thp-swap-v1", "-q", "--swap-size", NEWLINE])
    assert line == "swaplab run: error: --swap-size '64M\\nrm -rf' is not a size (examples: 64M, 16K, 2G)"


# ------------------------------------------------------------------ 6: compare

def _valid_result(work, name="a.json", **kw):
    rc = main(["run", "thp-swap-v1", "-q", "--iterations", "3", "--json", name])
    assert rc == 0
    with open(name) as f:
        return json.load(f)


def _mutations():
    def drop(*path):
        def f(r):
            d = r
            for k in path[:-1]:
                d = d[k]
            del d[path[-1]]
        return f

    def put(value, *path):
        def f(r):
            d = r
            for k in path[:-1]:
                d = d[k]
            d[path[-1]] = value
        return f
    return [
        ("iterations 5", put(5, "iterations")),
        ("iterations null", put(None, "iterations")),
        ("iteration missing", drop("iterations", 0, "iteration")),
        ("iteration string", put("1", "iterations", 0, "iteration")),
        ("iteration out of order", put(3, "iterations", 0, "iteration")),
        ("iteration item a list", put([], "iterations", 1)),
        ("size key missing", drop("iterations", 0, "sizes", "64")),
        ("sizes not object", put([], "iterations", 0, "sizes")),
        ("swpout missing", drop("iterations", 0, "sizes", "64", "swpout")),
        ("swpout negative", put(-1, "iterations", 0, "sizes", "64", "swpout")),
        ("swpout float", put(1.5, "iterations", 0, "sizes", "64", "swpout")),
        ("fallback_pct string", put("x", "iterations", 0, "sizes", "64", "fallback_pct")),
        ("fallback_pct 1000", put(1000, "iterations", 0, "sizes", "64", "fallback_pct")),
        ("swpin bool", put(True, "iterations", 0, "sizes", "64", "swpin")),
        ("order0 list", put([], "iterations", 0, "order0")),
        ("layout_hash short", put("abc", "iterations", 0, "layout_hash")),
        ("swap_bytes missing", drop("params", "swap_bytes")),
        ("swap_bytes string", put("64M", "params", "swap_bytes")),
        ("params list", put([], "params")),
        ("params seed missing", drop("params", "seed")),
        ("params rng unknown", put("mt", "params", "rng")),
        ("params iterations 0", put(0, "params", "iterations")),
        ("sizes_kb missing", drop("sizes_kb")),
        ("sizes_kb strings", put(["64"], "sizes_kb")),
        ("sizes_kb empty", put([], "sizes_kb")),
        ("sizes_kb differs", put([16], "sizes_kb")),
        ("summary missing", drop("summary")),
        ("summary size missing", drop("summary", "64")),
        ("summary mean missing", drop("summary", "64", "mean_fallback_pct")),
        ("layout missing", drop("layout")),
        ("layout hash number", put(5, "layout", "hash")),
        ("layout npages missing", drop("layout", "npages")),
        ("fewer iterations than params, complete", drop("iterations", 2)),
        ("source unknown", put("guess", "source")),
        ("workload differs", put("thp-swap", "workload")),
        ("not an object", lambda r: r.clear() or r.update({"schema": "swaplab.result/1", "x": 1})),
    ]


MUTATIONS = _mutations()


@pytest.mark.parametrize("name,mutate", MUTATIONS, ids=[m[0] for m in MUTATIONS])
def test_compare_malformed_result(capsys, work, name, mutate):
    good = _valid_result(work)
    bad = json.loads(json.dumps(good))
    mutate(bad)
    (work / "bad.json").write_text(json.dumps(bad))
    capsys.readouterr()
    line = assert_refused(capsys, work, ["compare", "a.json", "bad.json"])
    assert line.startswith("swaplab compare: error: result 'bad.json' ")
    assert "does not fit the result schema" in line or "is not a swaplab result" in line


@pytest.mark.parametrize("text", ["{bad", "[]", "{}", "5", '{"schema": 5}', "\udcff"])
def test_compare_not_a_result(capsys, work, text):
    _valid_result(work)
    (work / "bad.json").write_text(text, errors="surrogateescape")
    capsys.readouterr()
    assert_refused(capsys, work, ["compare", "a.json", "bad.json"], "result 'bad.json'")


def test_compare_incomplete_result_accepted(capsys, work):
    good = _valid_result(work)
    part = json.loads(json.dumps(good))
    part["iterations"] = part["iterations"][:2]
    part["complete"], part["stopped_by"] = False, "SIGINT"
    assert results.result_errors(part) is None
    (work / "p.json").write_text(json.dumps(part))
    capsys.readouterr()
    assert_refused(capsys, work, ["compare", "a.json", "p.json"],
                   "swaplab compare: error: cannot compare: a.json has 3 iterations, p.json has 2")


def test_compare_fifo_input_refused(capsys, work):
    _valid_result(work)
    os.mkfifo(work / "f.json")
    capsys.readouterr()
    assert_refused(capsys, work, ["compare", "a.json", "f.json"],
                   "cannot read result 'f.json': it is a FIFO, not a regular file")


# ------------------------------------------------------------------ 7: golden --check

@pytest.fixture
def no_compute(monkeypatch):
    """golden must refuse a bad file before it computes any variant."""
    def fail(policy):
        raise AssertionError("computed the golden variants before checking the file")
    monkeypatch.setattr(golden, "compute_golden", fail)


@pytest.mark.parametrize("text,want", [
    ("{bad", "is not JSON"), ('{"variants":5}', 'has no "variants" object'), ("[]", "is not a JSON object"),
    ("{}", 'has no "variants" object'), ('{"variants":{"v1":3}}', "variant v1 is not an object")])
def test_golden_check_malformed(capsys, work, no_compute, text, want):
    (work / "linux-6.18.json").write_text(text)
    assert_refused(capsys, work, ["golden", "--dir", ".", "--check"], want)


def test_golden_check_directory_and_missing(capsys, work, no_compute):
    assert_refused(capsys, work, ["golden", "--dir", ".", "--check"],
                   "swaplab golden: error: no golden file ./linux-6.18.json")
    (work / "linux-6.18.json").mkdir()
    assert_refused(capsys, work, ["golden", "--dir", ".", "--check"],
                   "cannot read golden file './linux-6.18.json': it is a directory, not a regular file")
    assert_refused(capsys, work, ["golden", "--dir", "."],
                   "cannot write golden file './linux-6.18.json': it is a directory")


# ------------------------------------------------------------------ 8: output conflicts

def test_output_conflicts(capsys, work):
    _valid_result(work)
    (work / "b.json").write_bytes((work / "a.json").read_bytes())
    (work / "a.bin").write_bytes(b"")
    capsys.readouterr()
    cases = [
        (["compare", "a.json", "b.json", "--json", "a.json"],
         "swaplab compare: error: --json 'a.json' is result A: refusing to overwrite an input"),
        (["compare", "a.json", "b.json", "--json", "./b.json"],
         "swaplab compare: error: --json './b.json' is result B: refusing to overwrite an input"),
        (["compare", "a.json", "b.json", "--layout-a", "a.bin", "--layout-b", "a.bin", "--json", "a.bin"],
         "swaplab compare: error: --json 'a.bin' is --layout-a: refusing to overwrite an input"),
        (["run", "thp-swap-v1", "-q", "--json", "x", "--layout-dump", "x"],
         "swaplab run: error: --json and --layout-dump both name 'x': one file each"),
        (["run", "thp-swap-v1", "-q", "--json", "x", "--layout-dump", "./x"],
         "swaplab run: error: --json and --layout-dump both name './x': one file each"),
        (["history", "thp-swap-v1", "--plot", "p.svg", "--json", "p.svg"],
         "swaplab history: error: --json and --plot both name 'p.svg': one file each"),
        (["bench", "threads", "--plot", "p.svg", "--json", "p.svg"],
         "swaplab bench: error: --json and --plot both name 'p.svg': one file each"),
        (["run", "thp-swap-v1", "-q", "--json", ""], "swaplab run: error: --json '' names no file"),
        (["run", "thp-swap-v1", "-q", "--layout-dump", ""], "swaplab run: error: --layout-dump '' names no file"),
        (["run", "thp-swap-v1", "-q", "--layout-dump", "-"],
         "swaplab run: error: cannot write --layout-dump '-'"),
        (["history", "thp-swap-v1", "--plot", ""], "swaplab history: error: --plot '' names no file"),
        (["bench", "threads", "--plot", ""], "swaplab bench: error: --plot '' names no file"),
        (["bench", "threads", "--threads", ""], "swaplab bench: error: --threads '' is empty"),
        (["bench", "threads", "--mix", ""], "swaplab bench: error: --mix '' is empty"),
        (["bench", "alloc", "--json", ""], "swaplab bench: error: --json '' names no file"),
        (["compare", "a.json", "b.json", "--json", ""], "swaplab compare: error: --json '' names no file"),
        (["compare", "a.json", "b.json", "--layout-a", "", "--layout-b", ""],
         "swaplab compare: error: --layout-a '' names no file"),
        (["validate", "--iterations", "1", "--json", ""], "swaplab validate: error: --json '' names no file"),
    ]
    for args, want in cases:
        line = assert_refused(capsys, work, args)
        assert line.startswith(want), (args, line)


# ------------------------------------------------------------------ 9, 10: bench

def test_bench_threads_refuses_what_it_cannot_hold(capsys, work, monkeypatch):
    monkeypatch.setattr(bench, "machine_memory", lambda: 8 << 30)
    line = assert_refused(capsys, work, ["bench", "threads", "--policy", "linux-6.18", "--size", "16T",
                                         "--threads", "1", "--orders", "0", "--fill", "50"])
    assert line.startswith("swaplab bench: error: --size 16T at fill 50% with 1 thread and --ops 1000000 "
                           "needs about "), line
    assert line.endswith(" GiB, more than half of this machine's 8.0 GiB"), line
    assert_refused(capsys, work, ["bench", "threads", "--policy", "linux-6.18", "--size", "8T",
                                  "--threads", "1", "--orders", "0", "--fill", "50"], "GiB")


def test_bench_threads_ring_holds_every_fill_folio():
    """The core sizes the rings from the fill: the figures are the same as
    with a ring of a slot per device page."""
    r = _core.bench_threads("linux-6.18", 64 << 8, 2, 0.9, [0, 4], 2000, 1)
    assert r["ops"] == 4000 and r["fill"] > 0.85


def test_bench_threads_list_rules(capsys, work):
    assert_refused(capsys, work, ["bench", "threads", "--mix", "0,0,0,0,0,0,0,0,0,0,4"],
                   "swaplab bench: error: --mix has 11 entries; it takes at most 10")
    assert_refused(capsys, work, ["bench", "threads", "--policy", "linux-6.18,linux-6.18"],
                   "swaplab bench: error: --policy names linux-6.18 twice")
    assert_refused(capsys, work, ["bench", "threads", "--policy", "linux-6.18", "--policy", "linux-6.18"],
                   "swaplab bench: error: --policy names linux-6.18 twice")


def test_bench_alloc_validates_before_running(capsys, work):
    assert_refused(capsys, work, ["bench", "alloc", "--sizes", "64M", "--orders", "0,9", "--fills", "1",
                                  "--runs", "0", "--pairs", "10"],
                   "swaplab bench: error: --fills 1 on a 64M device leaves room for no order-9 allocation (2M)")
    assert_refused(capsys, work, ["bench", "alloc", "--policy", "linux-6.9", "--orders", "0,4",
                                  "--sizes", "64M", "--runs", "0", "--pairs", "10", "--json", "b.json"],
                   "swaplab bench: error: --orders 4: policy linux-6.9: the device took no order-4 allocation")


# ------------------------------------------------------------------ 11: full disk, closed pipe

def test_full_stdout_names_the_stream(root):
    with open("/dev/full", "w") as full:
        p = subprocess.run([sys.executable, "-m", "swaplab.cli", "policies"], stdout=full,
                           stderr=subprocess.PIPE, text=True, cwd=root)
    assert p.returncode == 2
    assert p.stderr == "swaplab policies: error: cannot write stdout: No space left on device\n"


def test_full_disk_names_the_file(capsys, work, monkeypatch):
    (work / "r.json").write_text("old\n")

    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(results.os, "fsync", full)
    rc, out, err = sl(capsys, "run", "thp-swap-v1", "-q", "--iterations", "1", "--json", "r.json")
    assert rc == 2
    assert err == "swaplab run: error: cannot write r.json: No space left on device\n"
    assert os.listdir(work) == ["r.json"] and (work / "r.json").read_text() == "old\n"


def test_closed_pipe_other_commands(root):
    p = subprocess.Popen([sys.executable, "-m", "swaplab.cli", "history", "thp-swap-v1", "--iterations", "2",
                          "--json", "-"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=root)
    p.stdout.close()
    err = p.stderr.read()
    p.stderr.close()
    p.wait(timeout=120)
    assert b"Traceback" not in err and b"None" not in err
    assert p.returncode == 0, err


def test_compare_layout_inputs_must_be_regular(capsys, work):
    _valid_result(work)
    (work / "b.json").write_bytes((work / "a.json").read_bytes())
    os.mkfifo(work / "la.bin")
    (work / "lb.bin").mkdir()
    capsys.readouterr()
    assert_refused(capsys, work, ["compare", "a.json", "b.json", "--layout-a", "la.bin", "--layout-b", "lb.bin"],
                   "swaplab compare: error: cannot read --layout-a 'la.bin': it is a FIFO, not a regular file")
    os.unlink(work / "la.bin")
    (work / "la.bin").write_bytes(b"\0" * 8)
    assert_refused(capsys, work, ["compare", "a.json", "b.json", "--layout-a", "la.bin", "--layout-b", "lb.bin"],
                   "swaplab compare: error: --layout-a 'la.bin' holds 1 pages, its result has")
