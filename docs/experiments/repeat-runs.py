#!/usr/bin/env python3
"""Kernel-findings F40: how exactly the live kernel repeats a run, and how
often it matches the model exactly.

Two modes:

    python docs/experiments/repeat-runs.py --runs 8 --label after --json OUT
        runs one serial build setting (j4/32M, 64K, seed 2, `--window 1
        --stat-flush 1`) RUNS times on the live kernel and records each
        run's counts. SWAPLAB_RDRIVER chooses the driver binary, so the same
        script measures an older driver (F40 measured the driver before and
        after its fixes). Needs what `swaplab kernel run` needs.

    python docs/experiments/repeat-runs.py --agreement A1,A2 --agreement B1,B2
        no kernel: reads pairs of stored agreement files (`python -m
        swaplab.kernel.agree --seeds 5 --window 1`, run twice) and prints,
        per workload and size, in how many settings and seeds the kernel's
        counts were the same in both runs, and in how many the model's
        counts equal the kernel's (every size's swpout and swpin).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter

BUILD = ["build", "--jobs", "4", "--generations", "3", "--limit", "32M", "--size-median", "6M",
         "--size-max", "32M", "--size-min", "1M", "--mthp", "64K", "--seed", "2", "--window", "1",
         "--stat-flush", "1", "-q"]


def counts(sizes: dict) -> dict:
    return {kb: [s["swpout"], s["swpin"]] for kb, s in sorted(sizes.items(), key=lambda kv: int(kv[0]))}


def run_kernel(n: int, label: str) -> dict:
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "k.json")
        for _ in range(n):
            subprocess.run(["swaplab", "kernel", "run", *BUILD, "--json", out], check=True,
                           stdout=subprocess.DEVNULL)
            with open(out) as f:
                res = json.load(f)
            runs.append({"sizes": counts(res["sizes"]), "pgscan": res["reclaim"]["pgscan"],
                         "rcu_barrier": res["harness"].get("rcu_barrier", False)})
    return {"label": label, "setting": BUILD, "driver": os.environ.get("SWAPLAB_RDRIVER", "installed"),
            "runs": runs, "distinct": len({json.dumps(r["sizes"]) for r in runs})}


def agreement_cells(path: str) -> dict:
    """(workload, size, mthp, seed) -> (kernel counts, model counts)"""
    with open(path) as f:
        d = json.load(f)
    cells = {}
    for row in d["rows"]:
        for run in row["runs"]:
            key = (row["workload"], row["size"], row["mthp"], run["seed"])
            cells[key] = (counts(run["kernel"]["sizes"]), counts(run["model"]["sizes"]))
    return cells


def repeats(first: str, second: str) -> dict:
    a, b = agreement_cells(first), agreement_cells(second)
    if a.keys() != b.keys():
        raise SystemExit(f"{first} and {second} hold different settings")
    out = {}
    for key in sorted(a):
        group = f"{key[0]} {key[1]}"
        g = out.setdefault(group, {"cells": 0, "kernel_repeats": 0, "model_exact": [0, 0]})
        g["cells"] += 1
        g["kernel_repeats"] += a[key][0] == b[key][0]
        g["model_exact"][0] += a[key][0] == a[key][1]
        g["model_exact"][1] += b[key][0] == b[key][1]
    total = Counter()
    for g in out.values():
        total["cells"] += g["cells"]
        total["kernel_repeats"] += g["kernel_repeats"]
        total["model_exact_first"] += g["model_exact"][0]
        total["model_exact_second"] += g["model_exact"][1]
    return {"files": [first, second], "groups": out, "total": dict(total)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=0)
    ap.add_argument("--label", default="")
    ap.add_argument("--agreement", action="append", default=[],
                    help="two stored agreement files of the same settings, comma separated")
    ap.add_argument("--json")
    a = ap.parse_args()
    result = {}
    if a.runs:
        result["kernel"] = run_kernel(a.runs, a.label)
        r = result["kernel"]
        print(f"{r['label']}: {a.runs} runs, {r['distinct']} distinct; 4K swpout "
              + " ".join(str(x["sizes"]["4"][0]) for x in r["runs"]))
    for pair in a.agreement:
        files = pair.split(",")
        if len(files) != 2:
            raise SystemExit(f"--agreement takes two files, got {pair!r}")
        rep = repeats(*files)
        result.setdefault("agreement", []).append(rep)
        t = rep["total"]
        print(f"{pair}: kernel repeats {t['kernel_repeats']} of {t['cells']}; model exact "
              f"{t['model_exact_first']} and {t['model_exact_second']}")
        for group, g in rep["groups"].items():
            print(f"  {group:22s} repeats {g['kernel_repeats']:2d}/{g['cells']}  model exact "
                  f"{g['model_exact'][0]}, {g['model_exact'][1]}")
    if not result:
        ap.error("give --runs or --agreement")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(result, f, indent=1)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
