"""The CLI: bad input (one line naming the problem, exit 2, nothing written),
help everywhere, run output files, policies/workloads listings, bench JSON."""
import json
import os
import struct

import pytest

from swaplab import _core

BAD = [
    (["run", "nope"], "swaplab run: error: unknown workload 'nope' (known: thp-swap-v1, thp-swap)"),
    (["run", "thp-swap-v1", "--policy", "linux-9.99"],
     "swaplab run: error: unknown policy 'linux-9.99' (known: "
     + ", ".join(p["name"] for p in _core.policies()) + ")"),
    (["run", "thp-swap-v1", "--mthp", "48K"], "swaplab run: error: mTHP size 48K is not a power of two"),
    (["run", "thp-swap-v1", "--mthp", "64K,4M"], "swaplab run: error: mTHP size 4M is larger than a cluster (2M)"),
    (["run", "thp-swap-v1", "--mthp", "8K"],
     "swaplab run: error: mTHP size 8K is smaller than 16K, the smallest anonymous mTHP"),
    (["run", "thp-swap-v1", "--mthp", "64Q"],
     "swaplab run: error: mTHP size '64Q' is not a size (examples: 64M, 16K, 2G)"),
    (["run", "thp-swap-v1", "--swap-size", "1M"],
     "swaplab run: error: swap size 1M is smaller than one cluster (2M)"),
    (["run", "thp-swap-v1", "--swap-size", "lots"],
     "swaplab run: error: --swap-size 'lots' is not a size (examples: 64M, 16K, 2G)"),
    (["run", "thp-swap-v1", "--region-a-size", "0"],
     "swaplab run: error: --region-a-size 0: a region must not be empty"),
    (["run", "thp-swap", "-s", "--region-b-size", "0K"],
     "swaplab run: error: --region-b-size 0K: a region must not be empty"),
    (["run", "thp-swap-v1", "--region-a-size", "100K"],
     "swaplab run: error: --region-a-size 100K is not a multiple of 64K"),
    (["run", "thp-swap-v1", "--iterations", "-3"], "swaplab run: error: --iterations -3 is negative"),
    (["run", "thp-swap-v1", "--iterations", "ten"],
     "swaplab run: error: --iterations 'ten' is not a non-negative integer"),
    (["run", "thp-swap-v1", "--seed", "1.5"], "swaplab run: error: --seed '1.5' is not a non-negative integer"),
    (["run", "thp-swap-v1", "--cpu", "-1"], "swaplab run: error: --cpu -1 is negative"),
    (["run", "thp-swap-v1", "-a"], "swaplab run: error: --aligned-swapin applies to thp-swap only"),
    (["run", "thp-swap-v1", "--json", "/nonexistent/dir/r.json"],
     "swaplab run: error: cannot write --json '/nonexistent/dir/r.json': directory /nonexistent/dir does not exist"),
    (["run", "thp-swap-v1", "--layout-dump", "/"],
     "swaplab run: error: cannot write --layout-dump '/': it is a directory, not a regular file"),
    (["run", "thp-swap-v1", "--rng", "mt"],
     "swaplab run: error: argument --rng: invalid choice: 'mt' (choose from 'default', 'glibc')"),
    (["run", "thp-swap-v1", "--bogus"], "swaplab: error: unrecognized arguments: --bogus"),
    (["run"], "swaplab run: error: the following arguments are required: workload"),
    (["frobnicate"], None),
    (["bench", "alloc", "--orders", "12"], "swaplab bench: error: --orders 12 is above 9 (2M)"),
    (["bench", "alloc", "--fills", "100"], "swaplab bench: error: --fills 100 is not between 1 and 99"),
    (["bench", "alloc", "--sizes", "1M"], "swaplab bench: error: --sizes 1M is smaller than one cluster (2M)"),
    (["bench", "alloc", "--pairs", "-5"], "swaplab bench: error: --pairs -5 is negative"),
    (["golden", "--dir", "/nonexistent"], "swaplab golden: error: golden directory '/nonexistent' does not exist"),
    (["run", "thp-swap-v1", "--device", "floppy"],
     "swaplab run: error: argument --device: invalid choice: 'floppy' "
     "(choose from 'zram', 'ssd', 'ssd-discard', 'hdd', 'file')"),
    (["run", "thp-swap-v1", "--migrate-every", "64"],
     "swaplab run: error: --migrate-every needs --cpus of at least 2"),
    (["run", "thp-swap-v1", "--cpus", "0"], "swaplab run: error: --cpus 0 is outside 1..256"),
    (["run", "thp-swap-v1", "--policy", ""],
     "swaplab run: error: unknown policy '' (known: " + ", ".join(p["name"] for p in _core.policies()) + ")"),
    (["run", "thp-swap-v1", "--iterations", "0"], "swaplab run: error: --iterations 0 is outside 1..100000"),
    (["run", "thp-swap-v1", "--iterations", "2147483648"],
     "swaplab run: error: --iterations 2147483648 is outside 1..100000"),
    (["run", "thp-swap-v1", "--cpu", "2147483648"], "swaplab run: error: --cpu 2147483648 is outside 0..255"),
    (["run", "thp-swap-v1", "--swap-size", "18446744073709551616"],
     "swaplab run: error: --swap-size 18446744073709551616 is too large"),
    (["run", "thp-swap-v1", "--swap-size", "256T"],
     "swaplab run: error: swap size 256T is larger than the model supports here (16T)"),
    (["run", "thp-swap-v1", "--region-a-size", "1T"],
     "swaplab run: error: --region-a-size 1T is larger than the model supports here (64G)"),
    (["run", "thp-swap-v1", "--mthp", "64K,64K"], "swaplab run: error: --mthp names 64K twice"),
    (["run", "thp-swap-v1", "--swap-size", "\uff16\uff14M"],
     "swaplab run: error: --swap-size '\uff16\uff14M' is not a size (examples: 64M, 16K, 2G)"),
    (["run", "thp-swap-v1", "--json", "/proc/x.json"],
     "swaplab run: error: cannot write --json '/proc/x.json': No such file or directory"),
    (["bench", "alloc", "--sizes", "64M,,4G"], "swaplab bench: error: --sizes '64M,,4G' has an empty item"),
    (["bench", "alloc", "--orders", "0,0"], "swaplab bench: error: --orders '0,0' names a value twice"),
    (["bench", "alloc", "--pairs", "0"], "swaplab bench: error: --pairs 0 is outside 1..1000000000000"),
    (["bench", "alloc", "--sizes", "17T"], "swaplab bench: error: --sizes 17T is larger than the model supports here (16T)"),
    (["bench", "threads", "--threads", "1000"], "swaplab bench: error: --threads 1000 is outside 1..256"),
    (["bench", "threads", "--mix", ""], "swaplab bench: error: --mix '' is empty"),
    (["bench", "run", "--runs", "0"], "swaplab bench: error: --runs 0 is outside 1..10000"),
    (["bench", "run", "--policy", "no-such"],
     "swaplab bench: error: unknown policy 'no-such' (known: " + ", ".join(p["name"] for p in _core.policies()) + ")"),
    (["bench", "threads", "--ops", "18446744073709551616"],
     "swaplab bench: error: --ops 18446744073709551616 is outside 1..1000000000000"),
    (["kernel", "run", "thp-swap-v1", "--cpus", "4", "--migrate-every", "8"],
     "swaplab kernel run: error: the kernel harness pins its task to one CPU; --cpus and --migrate-every "
     "are for the model only"),
    (["run", "thp-swap-v1", "--add-swap", "1M"],
     "swaplab run: error: --add-swap size 1M is smaller than one cluster (2M)"),
    (["run", "thp-swap-v1", "--add-swap", "64M:floppy"],
     "swaplab run: error: --add-swap '64M:floppy': unknown device kind 'floppy' (known: zram, ssd, "
     "ssd-discard, hdd, file)"),
    (["run", "thp-swap-v1", "--add-swap", "64M:ssd:32768"],
     "swaplab run: error: --add-swap priority 32768 is outside 0..32767"),
    (["run", "thp-swap-v1", "--add-swap", "64M:ssd:5:1"],
     "swaplab run: error: --add-swap '64M:ssd:5:1' is not SIZE[:KIND[:PRIO]] (example: 64M:ssd:5)"),
    (["run", "thp-swap-v1", "--swap-prio", "-3"], "swaplab run: error: --swap-prio -3 is negative"),
    (["run", "thp-swap-v1"] + ["--add-swap", "4M"] * 8,
     "swaplab run: error: --add-swap given 8 times: the model takes 8 swap devices in all"),
    (["kernel", "run", "thp-swap-v1", "--add-swap", "64M:hdd"],
     "swaplab kernel run: error: the kernel harness swaps to zram devices of its own; --add-swap ...:hdd "
     "is for the model only"),
    (["kernel", "run", "thp-swap-v1", "--device", "hdd"],
     "swaplab kernel run: error: the kernel harness swaps to its own zram device; --device hdd is for "
     "the model only"),
]


@pytest.mark.parametrize("args,line", BAD, ids=[" ".join(a) for a, _ in BAD])
def test_bad_input_one_line_exit_2(cli, args, line):
    p = cli(*args)
    assert p.returncode == 2, p.stderr
    assert "Traceback" not in p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1, p.stderr
    if line is not None:
        assert lines[0] == line
    assert p.stdout == ""


def test_bad_input_writes_nothing(cli, tmp_path):
    out = tmp_path / "r.json"
    p = cli("run", "thp-swap-v1", "--mthp", "48K", "--json", str(out), "--layout-dump", str(tmp_path / "l.bin"))
    assert p.returncode == 2
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("cmd", [[], ["run"], ["policies"], ["workloads"], ["bench"], ["bench", "alloc"],
                                 ["bench", "run"], ["golden"]])
def test_help_everywhere(cli, cmd):
    p = cli(*cmd, "--help")
    assert p.returncode == 0
    assert p.stdout.startswith("usage: swaplab")


def test_policies_and_workloads_listings(cli):
    p = cli("policies", check=True)
    assert "linux-6.18" in p.stdout
    js = json.loads(cli("policies", "--json", check=True).stdout)
    assert [x["name"] for x in js["policies"]] == [x["name"] for x in _core.policies()]
    w = cli("workloads", "--json", check=True)
    listing = json.loads(w.stdout)
    assert [x["name"] for x in listing["workloads"]] == ["thp-swap-v1", "thp-swap", "usemem", "pmbench",
                                                         "build"]
    assert [x["name"] for x in listing["presets"]] == ["usemem-2024", "usemem-n48-16g", "pmbench-2020",
                                                       "kbuild-v5", "make-j96-768m", "make-j96-1152m-64k"]


def test_run_prints_table_and_writes_files(cli, tmp_path):
    j, l = tmp_path / "r.json", tmp_path / "l.bin"
    p = cli("run", "thp-swap", "-a", "-s", "--iterations", "4", "--mthp", "16K,64K", "--seed", "3",
            "--json", str(j), "--layout-dump", str(l), check=True)
    lines = p.stdout.splitlines()
    assert lines[0].startswith("# model linux-6.18 thp-swap swap=64M mthp=16K,64K -s -a seed=3")
    assert "16K swpout" in lines[1] and "64K swpout" in lines[1]
    assert [ln.split("|")[0].strip() for ln in lines[2:6]] == ["1", "2", "3", "4"]
    assert lines[6].startswith("summary 16K: mean fallback")
    assert lines[7].startswith("summary 64K: mean fallback")
    res = json.loads(j.read_text())
    assert res["params"]["aligned_swapin"] and res["params"]["small_folios"]
    assert res["params"]["mthp_kb"] == [16, 64] and res["params"]["seed"] == 3
    assert res["sizes_kb"] == [16, 64] and len(res["iterations"]) == 4
    data = l.read_bytes()
    assert len(data) == (15360 + 1024) * 8
    assert res["layout"]["hash"] == f"{_core.layout_hash(data):016x}"
    # the printed numbers are the JSON's
    it1 = res["iterations"][0]["sizes"]["64"]
    assert lines[2].split("|")[2].split()[:2] == [str(it1["swpout"]), str(it1["swpout_fallback"])]


def test_run_json_to_stdout_is_pure_json(cli):
    p = cli("run", "thp-swap-v1", "--iterations", "2", "-q", "--json", "-", check=True)
    assert json.loads(p.stdout)["workload"] == "thp-swap-v1"


def test_bench_alloc_json(cli, tmp_path):
    out = tmp_path / "b.json"
    cli("bench", "alloc", "--sizes", "64M", "--fills", "50", "--orders", "0,4", "--pairs", "20000",
        "--runs", "1", "--json", str(out), check=True)
    b = json.loads(out.read_text())
    assert b["schema"] == "swaplab.bench/1" and b["bench"] == "alloc"
    assert [(r["order"], r["fill_pct"]) for r in b["results"]] == [(0, 50), (4, 50)]
    assert all(r["ops_per_sec"] > 0 and r["failures"] == 0 for r in b["results"])
    assert b["thp_swap_v1"]["runs"] == 1


def test_bench_run_json(cli, tmp_path):
    """bench run: both whole-run cases of issue 16 with their targets; the
    runs are the model's own (the same counts as swaplab run)."""
    out = tmp_path / "r.json"
    cli("bench", "run", "--runs", "2", "--json", str(out), check=True)
    b = json.loads(out.read_text())
    assert b["schema"] == "swaplab.bench/1" and b["bench"] == "run" and b["policy"] == "linux-6.18"
    assert [(r["case"], r["target_ms"]) for r in b["results"]] == [("thp-swap-v1", 5.0),
                                                                   ("thp-swap -a 16K-1M", 15.0)]
    v1, mixed = b["results"]
    assert v1["params"]["workload"] == "thp-swap-v1" and v1["params"]["iterations"] == 100
    assert v1["params"]["swap_bytes"] == 64 << 20
    assert mixed["params"]["aligned_swapin"] is True
    assert mixed["params"]["mthp_sizes"] == ["16K", "32K", "64K", "128K", "256K", "512K", "1M"]
    for r in b["results"]:
        assert r["runs"] == 2 and len(r["seconds"]) == 2
        assert 0 < r["seconds_min"] <= r["seconds_median"] <= r["seconds_max"]
        assert r["met"] == (r["seconds_median"] * 1000 <= r["target_ms"])


def test_golden_check_passes_on_committed_file(cli, root):
    p = cli("golden", "--check", "--dir", os.path.join(root, "tests", "golden"), check=True)
    assert "0 differ" in p.stdout
