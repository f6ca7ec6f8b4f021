#!/usr/bin/env python3
"""Kernel-findings F29: usemem with every mTHP size, repeated on the live
kernel, each run's counts split at the end of its write (SETUP) phase, and
grouped by how many pages reclaim activated during the write; against the
model serially and with two processes at once, with and without the
re-read (a model run without it is the model's write phase).

    python docs/experiments/activation-kinds.py --runs 20 --json docs/data/f29/activation-kinds.json

Needs what `swaplab kernel run` needs (root, zram, a cgroup v1 memory
controller) and the installed package; about 40 kernel runs of under a
second. The kernel's counters of a phase are the harness's `phases`
(vmstat and mTHP counters read at each phase marker). pgactivate is a
system-wide vmstat counter: a few pages another process activates
meanwhile show up in it (the classes below are whole 2M folios, 512 pages).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

ALL = "16K,32K,64K,128K,256K,512K,1M,2M"
SETTINGS = [
    ("usemem 4x8M/16M all", ["usemem", "--procs", "4", "--size", "8M", "--limit", "16M"]),
    ("usemem 4x16M/32M all", ["usemem", "--procs", "4", "--size", "16M", "--limit", "32M"]),
]
COMMON = ["--mthp", ALL, "--seed", "1", "--swap-size", "256M", "--cpus", "2", "-q"]
SIZES = ("4", "16", "32", "64", "128", "256", "512", "1024", "2048")


def swaplab(argv: list, path: str) -> dict:
    p = subprocess.run(["swaplab", *argv, "--json", path], capture_output=True, text=True)
    if p.returncode:
        sys.exit(f"activation-kinds: swaplab {' '.join(argv)}: {p.stderr.strip() or p.returncode}")
    with open(path) as f:
        return json.load(f)


def counts(res: dict) -> dict:
    return {"swpout": {kb: res["sizes"].get(kb, {}).get("swpout", 0) for kb in SIZES},
            "swpin": {kb: res["sizes"].get(kb, {}).get("swpin", 0) for kb in SIZES},
            "pgactivate": res["reclaim"]["pgactivate"], "pgsteal": res["reclaim"]["pgsteal"]}


def kernel_run(opts: list, path: str) -> dict:
    res = swaplab(["kernel", "run", *opts, "--reread", "1", *COMMON, "--stat-flush", "16"], path)
    setup = next(p for p in res["phases"] if p["until"] == "phase 1")
    return dict(counts(res), setup_pgactivate=setup["vmstat"]["pgactivate"],
                setup_pgsteal=setup["vmstat"]["pgsteal_anon"])


def mean(xs: list) -> float:
    return round(statistics.mean(xs), 1)


def kinds(runs: list) -> list:
    """The kernel runs grouped by the pages activated during the write,
    rounded to whole 2M folios (512 pages)."""
    groups: dict = {}
    for r in runs:
        groups.setdefault(round(r["setup_pgactivate"] / 512), []).append(r)
    return [{"setup_2m_folios_activated": k, "runs": len(g),
             "pgactivate_in_the_reread": sorted(r["pgactivate"] - r["setup_pgactivate"] for r in g),
             "swpout": {kb: mean([r["swpout"][kb] for r in g]) for kb in SIZES},
             "swpin": {kb: mean([r["swpin"][kb] for r in g]) for kb in SIZES}}
            for k, g in sorted(groups.items())]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--json", required=True)
    a = ap.parse_args()
    out = {"schema": "swaplab.f29-activation-kinds/1", "runs": a.runs, "settings": []}
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "r.json")
        for label, opts in SETTINGS:
            model = {}
            for w in (1, 0):
                whole = counts(swaplab(["run", *opts, "--reread", "1", *COMMON, "--window", str(w)], path))
                write = counts(swaplab(["run", *opts, "--reread", "0", *COMMON, "--window", str(w)], path))
                model[str(w)] = dict(whole, setup_pgactivate=write["pgactivate"], setup_pgsteal=write["pgsteal"])
            runs = [kernel_run(opts, path) for _ in range(a.runs)]
            row = {"setting": label, "model": model, "kernel_runs": runs, "kernel_kinds": kinds(runs),
                   "kernel_mean": {"swpout": {kb: mean([r["swpout"][kb] for r in runs]) for kb in SIZES},
                                   "swpin": {kb: mean([r["swpin"][kb] for r in runs]) for kb in SIZES}}}
            out["settings"].append(row)
            print(label, file=sys.stderr)
            for w, m in model.items():
                print(f"  model window {w}: write activates {m['setup_pgactivate']} pages; 4K out {m['swpout']['4']},"
                      f" 64K out {m['swpout']['64']} in {m['swpin']['64']}", file=sys.stderr)
            for k in row["kernel_kinds"]:
                print(f"  kernel, {k['setup_2m_folios_activated']} 2M folios activated in the write: {k['runs']} runs;"
                      f" 4K out {k['swpout']['4']}, 64K out {k['swpout']['64']} in {k['swpin']['64']}",
                      file=sys.stderr)
            km = row["kernel_mean"]
            print(f"  kernel, all {a.runs} runs: 4K out {km['swpout']['4']}, 64K out {km['swpout']['64']}"
                  f" in {km['swpin']['64']}", file=sys.stderr)
    with open(a.json, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
