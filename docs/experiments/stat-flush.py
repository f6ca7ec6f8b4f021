#!/usr/bin/env python3
"""Kernel-findings F28: pmbench on the live kernel with and without the
driver's memory.stat reads (`swaplab kernel run --stat-flush N`), against
the model, with the workingset counters of each run.

    python docs/experiments/stat-flush.py --json docs/data/f28/stat-flush.json

Needs what `swaplab kernel run` needs (root, zram, a cgroup v1 memory
controller) and the installed package; runs about 40 kernel runs of 1-2 s.
Each setting runs the kernel with `--stat-flush 0` (the kernel's own 2 s
flush alone) and `--stat-flush 16`, and the model serially and with two
processes at once (`--window 1`, `--window 0`). A kernel run the group's
OOM killer ended is recorded as such.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

SETTINGS = [
    # (label, options, seeds)
    ("pmbench 2x24M/32M 4K", ["pmbench", "--procs", "2", "--wss", "24M", "--limit", "32M", "--accesses", "40000",
                              "--mthp", "none"], (1, 2, 3)),
    ("pmbench 2x24M/32M all", ["pmbench", "--procs", "2", "--wss", "24M", "--limit", "32M", "--accesses", "40000",
                               "--mthp", "16K,32K,64K,128K,256K,512K,1M,2M"], (1, 2, 3, 4, 5)),
    ("pmbench 2x12M/16M all", ["pmbench", "--procs", "2", "--wss", "12M", "--limit", "16M", "--accesses", "20000",
                               "--mthp", "16K,32K,64K,128K,256K,512K,1M,2M"], (1, 2, 3, 4, 5)),
]
COMMON = ["--swap-size", "256M", "--cpus", "2", "-q"]
KEYS = ("pgscan", "pgsteal", "pgactivate", "pgdeactivate", "workingset_refault", "workingset_activate",
        "workingset_restore")


def summary(res: dict) -> dict:
    r = res["reclaim"]
    return {"swpout": {kb: s["swpout"] for kb, s in res["sizes"].items()},
            "swpin": {kb: s["swpin"] for kb, s in res["sizes"].items()},
            "reclaim": {k: r.get(k) for k in KEYS}}


def run(argv: list, path: str) -> dict:
    p = subprocess.run(["swaplab", *argv, "--json", path], capture_output=True, text=True)
    if p.returncode:
        return {"error": p.stderr.strip().splitlines()[-1] if p.stderr.strip() else f"exit {p.returncode}"}
    with open(path) as f:
        return summary(json.load(f))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", required=True)
    a = ap.parse_args()
    out = {"schema": "swaplab.f28-stat-flush/1", "settings": []}
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "r.json")
        for label, opts, seeds in SETTINGS:
            rows = []
            for seed in seeds:
                argv = [*opts, *COMMON, "--seed", str(seed)]
                row = {"seed": seed}
                for n in (0, 16):
                    row[f"kernel_flush{n}"] = run(["kernel", "run", *argv, "--stat-flush", str(n)], path)
                for w in (1, 0):
                    row[f"model_window{w}"] = run(["run", *argv, "--window", str(w)], path)
                rows.append(row)
                print(label, seed, {k: v["error"][-40:] if "error" in v else v["reclaim"]["workingset_activate"]
                                    for k, v in row.items() if k != "seed"}, file=sys.stderr)
            out["settings"].append({"setting": label, "options": opts + COMMON, "runs": rows})
    with open(a.json, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
