"""swaplab sweep: the grid, the table, resuming, aggregation, Ray, bad specs."""
import csv
import importlib.util
import json
import os

import pytest

from swaplab import sweeps

HAVE_RAY = importlib.util.find_spec("ray") is not None


def _table(d):
    with open(os.path.join(d, "table.csv"), newline="") as f:
        return list(csv.DictReader(f))


def test_grid_rows_match_single_runs(cli, tmp_path):
    out = tmp_path / "s"
    cli("sweep", "-q", "-o", str(out), "--policy", "linux-6.18", "--policy", "linux-6.12",
        "--seed", "1-2", "--mthp", "64K", "--mthp", "16K,64K", "--iterations", "8", "-j", "2", check=True)
    rows = _table(out)
    # 2 policies x 2 mTHP sets x 2 seeds = 8 cells; 12 rows (the 16K,64K cells have two sizes)
    assert len(rows) == 12
    assert [r["policy"] for r in rows[:6]] == ["linux-6.18"] * 6
    meta = json.loads((out / "sweep.json").read_text())
    assert meta["cells"] == 8 and meta["cells_run"] == 8 and meta["spec"]["seed"] == [1, 2]
    # a row holds the summary of the same run done alone
    r = next(x for x in rows if x["policy"] == "linux-6.12" and x["mthp"] == "16K,64K"
             and x["seed"] == "2" and x["size_kb"] == "64")
    p = cli("run", "thp-swap-v1", "--policy", "linux-6.12", "--mthp", "16K,64K", "--seed", "2",
            "--iterations", "8", "--json", "-", check=True)
    res = json.loads(p.stdout)
    assert r["iterations_with_data"] == "8"
    assert float(r["mean_fallback_pct"]) == pytest.approx(res["summary"]["64"]["mean_fallback_pct"], abs=1e-4)
    assert int(r["swpout"]) == res["summary"]["64"]["swpout"]
    assert r["final_layout_hash"] == res["iterations"][-1]["layout_hash"]
    # thp-swap-v1 faults 64K folios only: 16K has no data (0/0), not 0 %
    r16 = next(x for x in rows if x["cell"] == r["cell"] and x["size_kb"] == "16")
    assert (r16["iterations_with_data"], r16["mean_fallback_pct"], r16["swpout"]) == ("0", "", "0")


def test_resume_skips_finished_cells_and_table_is_the_same(cli, tmp_path):
    out = tmp_path / "s"
    args = ["sweep", "-q", "-o", str(out), "--seed", "1-3", "--iterations", "5", "-j", "1"]
    cli(*args, check=True)
    first = (out / "table.csv").read_text()
    # a torn last line (an interrupted write) and one cell forgotten
    lines = (out / "cells.jsonl").read_text().splitlines()
    (out / "cells.jsonl").write_text("\n".join(lines[:2]) + "\n" + lines[2][:10])
    cli(*args, check=True)
    meta = json.loads((out / "sweep.json").read_text())
    assert (meta["cells_resumed"], meta["cells_run"]) == (2, 1)
    assert (out / "table.csv").read_text() == first
    cli(*args, "--seed", "4", check=True)   # the grid grows by seed 4: one cell to run
    meta = json.loads((out / "sweep.json").read_text())
    assert meta["cells"] == 4 and meta["cells_run"] == 1
    cli(*args, "--metrics", check=True)      # cells without metrics are not cells with them
    meta = json.loads((out / "sweep.json").read_text())
    assert meta["cells_run"] == 3 and all(r["final_bluestore_score"] for r in _table(out))


def test_toml_spec_metrics_and_aggregate(cli, tmp_path):
    spec = tmp_path / "s.toml"
    spec.write_text('policy = ["linux-6.18", "linux-6.9"]\nseed = [1, 2, 3]\niterations = 20\n'
                    'small_folios = true\nmetrics = true\n')
    out = tmp_path / "o"
    cli("sweep", str(spec), "-q", "-o", str(out), check=True)
    rows = _table(out)
    assert len(rows) == 6 and {r["small_folios"] for r in rows} == {"true"}
    assert all(0.0 <= float(r["final_bluestore_score"]) <= 1.0 for r in rows)
    with open(out / "agg.csv", newline="") as f:
        agg = list(csv.DictReader(f))
    assert [a["policy"] for a in agg] == ["linux-6.18", "linux-6.9"]
    old = agg[1]
    assert old["seeds"] == "3" and old["reference_policy"] == "linux-6.18"
    assert old["mean_fallback_pct_significant"] in ("true", "false")
    assert agg[0]["mean_fallback_pct_p_vs_ref"] == ""   # the reference itself


def test_region_offset_axis_rows_match_single_runs(cli, tmp_path):
    out = tmp_path / "s"
    f = tmp_path / "g.toml"
    f.write_text('workload = "thp-swap"\naligned_swapin = true\nmthp = "64K,2M"\niterations = 6\n'
                 'region_offset = ["0", "1028K,12K"]\n')
    cli("sweep", str(f), "-q", "-o", str(out), "-j", "1", check=True)
    rows = _table(out)
    assert [r["region_offset"] for r in rows] == ["0", "0", "1028K,12K", "1028K,12K"]
    r = next(x for x in rows if x["region_offset"] == "1028K,12K" and x["size_kb"] == "64")
    p = cli("run", "thp-swap", "-a", "--mthp", "64K,2M", "--iterations", "6", "--region-offset", "1028K,12K",
            "--json", "-", check=True)
    res = json.loads(p.stdout)
    assert res["params"]["region_offset"] == [1028 * 1024, 12 * 1024]
    assert int(r["swpout"]) == res["summary"]["64"]["swpout"]
    assert r["final_layout_hash"] == res["iterations"][-1]["layout_hash"]
    # the offset changes the run: the aligned cell's layout differs
    assert rows[0]["final_layout_hash"] != r["final_layout_hash"]
    # the command line's --region-offset replaces the spec's axis
    cli("sweep", str(f), "-q", "-o", str(tmp_path / "t"), "-j", "1", "--region-offset", "704K", check=True)
    assert {x["region_offset"] for x in _table(tmp_path / "t")} == {"704K"}


@pytest.mark.parametrize("spec,msg", [
    ("region_offset = ['0', '3K']\n", "--region-offset 3K is not a multiple of 4K"),
    ("policy = []\n", "spec key 'policy' is an empty list"),
    ("polcy = ['x']\n", "unknown spec key 'polcy'"),
    ("seed = [1, 1]\n", "spec key 'seed' names a value twice"),
    ("policy = ['nope']\n", "unknown policy 'nope'"),
    ("swap_size = ['1M']\n", "swap size 1M is smaller than one cluster (2M)"),
    ("seed = = 1\n", "is not TOML"),
])
def test_bad_specs_one_line(cli, tmp_path, spec, msg):
    f = tmp_path / "s.toml"
    f.write_text(spec)
    p = cli("sweep", str(f), "-o", str(tmp_path / "o"))
    assert p.returncode == 2 and p.stderr.count("\n") == 1
    assert msg in p.stderr
    assert not (tmp_path / "o" / "table.csv").exists()


def test_seed_ranges():
    assert sweeps.parse_seeds(["1-3,7", "9"]) == [1, 2, 3, 7, 9]
    with pytest.raises(sweeps.ParamError, match="--seed range 5-2 is empty"):
        sweeps.parse_seeds(["5-2"])


@pytest.mark.skipif(not HAVE_RAY, reason="ray is not installed (pip install 'swaplab[ray]')")
def test_ray_table_equals_process_pool(cli, tmp_path):
    args = ["--policy", "linux-6.18,linux-6.12", "--seed", "1-3", "--iterations", "10", "-q"]
    cli("sweep", "-o", str(tmp_path / "pool"), *args, check=True)
    cli("sweep", "-o", str(tmp_path / "ray"), "--ray", *args, check=True, timeout=600)
    assert (tmp_path / "ray" / "table.csv").read_text() == (tmp_path / "pool" / "table.csv").read_text()
    assert json.loads((tmp_path / "ray" / "sweep.json").read_text())["backend"] == "ray"


def test_cells_a_policy_refuses_are_skipped(monkeypatch, tmp_path):
    """Cells a policy refuses (a device kind it does not model) are skipped,
    as history skips them; a grid with no runnable cell is refused. No
    policy refuses a device kind today, so the core's refusal is stood in for."""
    from swaplab import params
    real = params._core.validate

    def validate(policy, **kw):
        if policy == "linux-6.10" and kw["device"] == "hdd":
            raise ValueError("policy linux-6.10 does not model this device kind (hdd)")
        return real(policy=policy, **kw)

    monkeypatch.setattr(params._core, "validate", validate)
    spec = sweeps.normalize_spec({"policy": ["linux-6.10", "linux-6.18"], "device": ["zram", "hdd"],
                                  "iterations": 3})
    meta = sweeps.run_sweep(spec, str(tmp_path / "s"), jobs=1, quiet=True)
    assert [(r["policy"], r["device"]) for r in meta["rows_data"]] == [
        ("linux-6.10", "zram"), ("linux-6.18", "zram"), ("linux-6.18", "hdd")]
    assert [(s["policy"], s["device"], s["reason"]) for s in meta["skipped"]] == [
        ("linux-6.10", "hdd", "policy linux-6.10 does not model this device kind (hdd)")]
    spec = sweeps.normalize_spec({"policy": "linux-6.10", "device": "hdd"})
    with pytest.raises(sweeps.ParamError, match="policy linux-6.10 does not model"):
        sweeps.run_sweep(spec, str(tmp_path / "t"), jobs=1, quiet=True)
    assert not (tmp_path / "t").exists()


def test_ctrl_c_keeps_finished_cells(cli, tmp_path, root):
    """SIGINT: exit 130, the finished cells stay in cells.jsonl and a re-run
    resumes them."""
    import signal
    import subprocess
    import sys
    import time
    out = tmp_path / "s"
    args = ["sweep", "-q", "-o", str(out), "--seed", "1-300", "--iterations", "50", "-j", "2"]
    # SIGINT as a terminal gives it, whatever the shell that started pytest
    # left (a background job starts with SIGINT ignored)
    p = subprocess.Popen([sys.executable, "-m", "swaplab.cli", *args], cwd=root,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    log = out / "cells.jsonl"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and (not log.exists() or log.read_text().count("\n") < 3):
        time.sleep(0.05)
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=120)
    assert p.returncode == 130 and err == "swaplab: interrupted\n"
    kept = log.read_text().count("\n")
    assert 3 <= kept < 300
    cli(*args, check=True)
    meta = json.loads((out / "sweep.json").read_text())
    assert meta["cells_resumed"] >= kept and meta["cells"] == 300
