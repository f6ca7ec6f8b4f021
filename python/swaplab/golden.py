"""Golden results: fixed-seed runs pinned per policy (tests/golden/<policy>.json).

`swaplab golden --policy P` regenerates the file for review (git diff), and
`--check` compares without writing; the tests call golden_variants() and
compute_golden() and compare with the committed file. Files are never
overwritten by the tests.
"""
from __future__ import annotations

import json
import os
import sys

from .model import run_model
from .params import ParamError, WorkloadParams, check_policy_name

# (label, workload, options): every published variant, both random sources.
VARIANTS = [
    ("v1", "thp-swap-v1", {}),
    ("v1-s", "thp-swap-v1", {"small_folios": True}),
    ("v1-s-16K", "thp-swap-v1", {"small_folios": True, "mthp_kb": [16]}),
    ("v1-glibc", "thp-swap-v1", {"rng": "glibc"}),
    ("v2", "thp-swap", {}),
    ("v2-a", "thp-swap", {"aligned_swapin": True}),
    ("v2-s", "thp-swap", {"small_folios": True}),
    ("v2-a-s", "thp-swap", {"aligned_swapin": True, "small_folios": True}),
    ("v2-a-glibc-48M", "thp-swap", {"aligned_swapin": True, "rng": "glibc", "swap_bytes": 48 << 20,
                                    "region_a_bytes": 44 << 20}),
    ("v2-16K-64K-2M", "thp-swap", {"mthp_kb": [16, 64, 2048], "iterations": 30}),
]


def golden_variants() -> list:
    out = []
    for label, wl, opts in VARIANTS:
        wp = WorkloadParams(workload=wl)
        for k, v in opts.items():
            setattr(wp, k, v)
        out.append((label, wp))
    return out


def compute_golden(policy: str) -> dict:
    variants = {}
    for label, wp in golden_variants():
        res, _ = run_model(wp, policy, check=1)
        variants[label] = {
            "params": res["params"],
            "iterations": [{"sizes": {kb: [s["swpout"], s["swpout_fallback"], s["swpin"]]
                                      for kb, s in it["sizes"].items()},
                            "order0": [it["order0"]["swpout"], it["order0"]["swpin"],
                                       it["order0"]["alloc_fail"]],
                            "layout_hash": it["layout_hash"]} for it in res["iterations"]],
        }
    return {"policy": policy, "format": "per iteration: sizes kB -> [swpout, swpout_fallback, swpin]; "
                                        "order0 -> [swpout, swpin, alloc_fail]", "variants": variants}


def golden_path(policy: str, root: str = "tests/golden") -> str:
    return os.path.join(root, f"{policy}.json")


def add_parsers(sub) -> None:
    g = sub.add_parser("golden", help="regenerate or check the golden per-iteration results",
                       description="Runs the golden variants for a policy and writes "
                                   "tests/golden/<policy>.json (review with git diff).")
    g.add_argument("--policy", default="linux-6.18")
    g.add_argument("--dir", default="tests/golden", help="golden directory (default tests/golden)")
    g.add_argument("--check", action="store_true", help="compare with the file; exit 1 on a difference")
    g.set_defaults(func=main)


def main(a) -> int:
    check_policy_name(a.policy)
    if not os.path.isdir(a.dir):
        raise ParamError(f"golden directory '{a.dir}' does not exist")
    data = compute_golden(a.policy)
    path = golden_path(a.policy, a.dir)
    if a.check:
        if not os.path.exists(path):
            raise ParamError(f"no golden file {path}")
        with open(path) as f:
            old = json.load(f)
        bad = [k for k in data["variants"] if old["variants"].get(k) != data["variants"][k]]
        for k in bad:
            print(f"golden {a.policy} {k}: differs", file=sys.stderr)
        print(f"golden {a.policy}: {len(data['variants']) - len(bad)} variants agree, {len(bad)} differ")
        return 1 if bad else 0
    with open(path, "w") as f:
        json.dump(data, f, indent=0, separators=(",", ":"))
        f.write("\n")
    print(f"wrote {path}: {len(data['variants'])} variants")
    return 0
