"""swaplab bench compare (the regression guard): argument handling with its
exact messages, and the report of a tiny run of HEAD against HEAD (structure,
never timings; under callgrind the instruction counts of one build against
itself must agree)."""
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT

IN_GIT = subprocess.run(["git", "-C", ROOT, "rev-parse", "--verify", "--quiet", "HEAD"],
                        capture_output=True).returncode == 0
needs_git = pytest.mark.skipif(not IN_GIT or shutil.which("cmake") is None,
                               reason="needs the git repository and cmake")
TINY = ["--sizes", "64M", "--fills", "50", "--orders", "0", "--pairs", "3000"]


@pytest.mark.parametrize("args, message", [
    (["no-such-rev"], "unknown revision 'no-such-rev'"),
    (["--", "-x"], "unknown revision '-x'"),
    (["HEAD", "no-such-rev"], "unknown revision 'no-such-rev'"),
    (["HEAD", "--repeats", "0"], "--repeats 0 is outside 1..100"),
    (["HEAD", "--sizes", "64M,64M"], "--sizes '64M,64M' names a value twice"),
    (["HEAD", "--fills", "100"], "--fills 100 is not between 1 and 99"),
    (["HEAD", "--threads", "0"], "--threads 0 is outside 1..256"),
    (["HEAD", "--policy", "no-such-policy"], None),
    (["HEAD", "--build-dir", "README.md"], "--build-dir 'README.md' is not a directory"),
])
@needs_git
def test_compare_refusals(cli, args, message):
    r = cli("bench", "compare", *args)
    assert r.returncode == 2, r.stderr
    assert r.stdout == ""
    line = r.stderr.strip()
    assert len(line.splitlines()) == 1 and "Traceback" not in line
    if message:
        assert line == f"swaplab bench: error: {message}"
    else:
        assert line.startswith("swaplab bench: error: unknown policy 'no-such-policy'")


def test_compare_outside_a_git_repository(tmp_path):
    r = subprocess.run([sys.executable, "-m", "swaplab.cli", "bench", "compare", "HEAD", *TINY],
                       capture_output=True, text=True, cwd=tmp_path,
                       env=dict(os.environ, GIT_CEILING_DIRECTORIES=str(tmp_path.parent)))
    assert r.returncode == 2
    assert r.stderr == ("swaplab bench: error: bench compare runs inside the swaplab git repository "
                        "(not a git work tree here)\n")


@pytest.fixture(scope="module")
def build_dir(tmp_path_factory):
    return str(tmp_path_factory.mktemp("compare-builds"))


@needs_git
def test_compare_head_with_head_time_mode(cli, build_dir, tmp_path):
    out = tmp_path / "cmp.json"
    r = cli("bench", "compare", "HEAD", "HEAD", *TINY, "--runs", "1", "--repeats", "2",
            "--build-dir", build_dir, "--json", str(out), timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    sha = subprocess.run(["git", "-C", ROOT, "rev-parse", "HEAD"], capture_output=True,
                         text=True).stdout.strip()
    d = json.loads(out.read_text())
    assert d["schema"] == "swaplab.bench-compare/1" and d["mode"] == "time" and d["repeats"] == 2
    assert d["a"] == {"rev": "HEAD", "commit": sha} and d["b"] == {"rev": "HEAD", "commit": sha}
    assert [c["case"] for c in d["cases"]] == ["alloc 64M order 0 fill 50%", "run thp-swap-v1 linux-6.18",
                                               "run thp-swap -a 16K-1M linux-6.18"]
    assert [c["metric"] for c in d["cases"]] == ["pairs/s", "seconds", "seconds"]
    assert d["run_cases"] == ["thp-swap-v1", "thp-swap -a 16K-1M"]
    for c in d["cases"]:
        for side in ("a", "b"):
            s = c[side]
            assert len(s["values"]) == 2 and s["min"] <= s["median"] <= s["max"] and s["min"] > 0
        assert c["ratio"] == pytest.approx(c["b"]["median"] / c["a"]["median"])
    lines = r.stdout.splitlines()
    assert lines[0] == f"A: HEAD ({sha[:12]})" and lines[1] == f"B: HEAD ({sha[:12]})"
    assert lines[2].startswith("time, 2 alternating rounds (A B A B ...)")
    assert re.fullmatch(r"alloc 64M order 0 fill 50%\s+pairs/s\s+A\s+[\d.]+ M \[[\d.]+ M-[\d.]+ M\]\s+"
                        r"B\s+[\d.]+ M \[[\d.]+ M-[\d.]+ M\]\s+ratio \d+\.\d{3}", lines[3]), lines[3]
    for line, case in zip(lines[4:], ("run thp-swap-v1 linux-6.18", "run thp-swap -a 16K-1M linux-6.18")):
        assert re.fullmatch(re.escape(case) + r"\s+seconds\s+A\s+[\d.]+ ms \[.*\]\s+B\s+[\d.]+ ms "
                            r"\[.*\]\s+ratio \d+\.\d{3}", line), line
    assert len(lines) == 6
    # the commit's build was kept and is reused
    assert os.path.exists(os.path.join(build_dir, sha, "built"))


@needs_git
@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed")
def test_compare_head_with_head_callgrind(cli, build_dir):
    r = cli("bench", "compare", "HEAD", "HEAD", "--callgrind", *TINY, "--runs", "0",
            "--build-dir", build_dir, "--json", "-", timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    d = json.loads(r.stdout)
    assert d["mode"] == "callgrind" and d["repeats"] == 1
    (c,) = d["cases"]
    assert c["case"] == "alloc 64M order 0 fill 50%" and c["metric"] == "instructions/pair"
    assert 50 < c["a"]["median"] < 20000
    # the same build, the same seed: the same instructions
    assert c["ratio"] == pytest.approx(1.0, abs=0.01)
