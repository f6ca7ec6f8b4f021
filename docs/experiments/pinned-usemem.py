#!/usr/bin/env python3
"""Kernel-findings F36, part 6: F26's seven settings of one pinned usemem
process, each run RUNS times on the live kernel with the statistics as the
kernel keeps them (`--stat-flush 0`, every 2 s) and read before every
operation (`--stat-flush 1`), against the model's layout dump: how many
kernel runs put every page on the model's slot at the RUN marker (the
write done) and through the whole run (the dumps byte-identical), and how
many had pages of another task on the device (F5, F36 part 5).

    python docs/experiments/pinned-usemem.py --runs 10 --json docs/data/f36/pinned-usemem.json
    python docs/experiments/pinned-usemem.py --multi --runs 3 --json docs/data/f36/serial-usemem-2cpus.json

With --multi: four settings of several processes on two CPUs, still
serially (`--window 1`), with the statistics read every operation only
(F36 part 7; F37 with the driver's children pinned before they join the
group), and the pages that differ per layout record.

Needs what `swaplab kernel run` needs (root, zram, a cgroup v1 memory
controller) and the installed package; about 140 kernel runs of under a
second each.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

from swaplab.kernel.reclaim import other_pages

ALL = "16K,32K,64K,128K,256K,512K,1M,2M"
SETTINGS = [(1, "32M", "16M", "64K"), (1, "32M", "16M", ALL), (1, "48M", "16M", "64K"), (1, "32M", "8M", "64K"),
            (1, "32M", "16M", "none"), (1, "32M", "16M", "2M"), (1, "64M", "24M", "16K,64K")]
MULTI = [(4, "8M", "16M", "64K"), (4, "8M", "16M", ALL), (2, "16M", "16M", "64K"), (4, "8M", "16M", "none")]


def argv(procs: int, size: str, limit: str, mthp: str) -> list:
    return ["usemem", "--procs", str(procs), "--size", size, "--limit", limit, "--reread", "1", "--mthp", mthp,
            "--swap-size", "256M", "--cpus", "1" if procs == 1 else "2", "--seed", "1", "--window", "1", "-q"]


def differ(kdump: bytes, mdump: bytes, recs: list) -> list:
    """Per layout record (label, phase, proc): the pages whose entry differs."""
    out = []
    for x in recs:
        a, b = 8 * x["first"], 8 * (x["first"] + x["npages"])
        k, m = kdump[a:b], mdump[a:b]
        out.append([x["label"], x["phase"], x["proc"], sum(k[i:i + 8] != m[i:i + 8] for i in range(0, len(k), 8))])
    return out


def swaplab(args: list) -> None:
    p = subprocess.run(["swaplab", *args], capture_output=True, text=True)
    if p.returncode:
        sys.exit(f"pinned-usemem: swaplab {' '.join(args)}: {p.stderr.strip() or p.returncode}")


def main() -> int:
    ap = argparse.ArgumentParser(prog="pinned-usemem.py")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--multi", action="store_true", help="several processes on two CPUs (F36 part 7)")
    ap.add_argument("--json", required=True)
    a = ap.parse_args()
    out = {"schema": "swaplab.f36-pinned-usemem/1", "runs": a.runs, "settings": []}
    with tempfile.TemporaryDirectory() as tmp:
        for procs, size, limit, mthp in (MULTI if a.multi else SETTINGS):
            base = argv(procs, size, limit, mthp)
            mj, mb = os.path.join(tmp, "m.json"), os.path.join(tmp, "m.bin")
            swaplab(["run", *base, "--json", mj, "--layout-dump", mb])
            with open(mj) as f:
                model = json.load(f)
            with open(mb, "rb") as f:
                mdump = f.read()
            run = next(x for x in model["layouts"] if x["phase"] == 1)
            span = 8 * (run["first"] + run["npages"])
            row = {"procs": procs, "size": size, "limit": limit, "mthp": mthp,
                   "model_run_layout_hash": model["run_layout_hash"]}
            for flush in ((1,) if a.multi else (0, 1)):
                kj, kb = os.path.join(tmp, "k.json"), os.path.join(tmp, "k.bin")
                tally = {"at_run": 0, "whole": 0, "other_pages": 0, "differ": []}
                for _ in range(a.runs):
                    swaplab(["kernel", "run", *base, "--stat-flush", str(flush), "--phase-layouts",
                             "--json", kj, "--layout-dump", kb])
                    with open(kj) as f:
                        k = json.load(f)
                    with open(kb, "rb") as f:
                        kdump = f.read()
                    tally["at_run"] += kdump[:span] == mdump[:span]
                    tally["whole"] += kdump == mdump
                    tally["other_pages"] += other_pages(k) > 0
                    if a.multi:
                        tally["differ"].append(differ(kdump, mdump, model["layouts"]))
                row[f"stat_flush_{flush}"] = tally
                print(f"{procs}x{size}/{limit} {mthp} --stat-flush {flush}: of {a.runs}, {tally['at_run']} agree at RUN, "
                      f"{tally['whole']} through the run, {tally['other_pages']} with other pages", file=sys.stderr)
            out["settings"].append(row)
    with open(a.json, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
