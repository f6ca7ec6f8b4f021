"""Golden results: fixed-seed runs pinned per policy (tests/golden/<policy>.json),
and what the live kernel produced (tests/golden/kernel-<release>.json).

`swaplab golden --policy P` regenerates a policy's file for review (git diff);
`--check` compares without writing. `swaplab golden --kernel` records the
live kernel's per-iteration counts and layout hashes for KERNEL_VARIANTS,
so that the model's agreement with the kernel stays checked on machines
without root or zram (tests/py/test_kernel_golden.py). The tests never
overwrite these files.
"""
from __future__ import annotations

import json
import os
import sys

from .model import run_model
from .params import ParamError, WorkloadParams, shown, shown_path
from .results import check_writable, load_json_file, write_output

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
    # regions placed off 2 MiB (--region-offset, docs/placement.md), mixed sizes
    ("v1-s-16K-64K-256K-at-1472K", "thp-swap-v1", {"small_folios": True, "mthp_kb": [16, 64, 256],
                                                   "region_offset": [1472 << 10, 12 << 10],
                                                   "iterations": 30}),
    ("v1-glibc-16K-64K-256K-at-128K", "thp-swap-v1", {"rng": "glibc", "mthp_kb": [16, 64, 256], "cpu": 1,
                                                      "region_offset": [128 << 10, 0]}),
    ("v2-a-64K-2M-at-704K", "thp-swap", {"aligned_swapin": True, "mthp_kb": [64, 2048],
                                         "region_offset": [704 << 10, 0], "iterations": 30}),
    ("v2-a-s-all-at-1028K", "thp-swap", {"aligned_swapin": True, "small_folios": True,
                                         "mthp_kb": [16, 32, 64, 128, 256, 512, 1024, 2048],
                                         "region_offset": [1028 << 10, 12 << 10], "iterations": 30}),
    # device kinds and several devices (model only)
    ("v1-s-hdd", "thp-swap-v1", {"small_folios": True, "device": "hdd", "iterations": 30}),
    ("v1-s-discard", "thp-swap-v1", {"small_folios": True, "device": "ssd-discard", "iterations": 30}),
    ("v1-s-2x32M", "thp-swap-v1", {"small_folios": True, "swap_bytes": 32 << 20, "swap_prio": 5,
                                   "extra_swap": [{"bytes": 32 << 20, "kind": "zram", "prio": 5}],
                                   "iterations": 30}),
    ("v1-16M-over-ssd", "thp-swap-v1", {"swap_bytes": 16 << 20, "swap_prio": 10,
                                        "extra_swap": [{"bytes": 64 << 20, "kind": "ssd", "prio": 1}],
                                        "iterations": 30}),
]


# Kernel-pinned variants: deterministic on the 6.18 kernel (docs/kernel-findings.md);
# thp-swap -s at 64M fills the device and is not (F4), so it is absent.
KERNEL_VARIANTS = [
    ("v1", "thp-swap-v1", {}),
    ("v1-s", "thp-swap-v1", {"small_folios": True}),
    ("v1-glibc", "thp-swap-v1", {"rng": "glibc"}),
    ("v1-s-glibc", "thp-swap-v1", {"small_folios": True, "rng": "glibc"}),
    ("v1-16K", "thp-swap-v1", {"mthp_kb": [16]}),
    ("v1-s-32K", "thp-swap-v1", {"small_folios": True, "mthp_kb": [32]}),
    ("v1-128K", "thp-swap-v1", {"mthp_kb": [128]}),
    ("v1-s-256K", "thp-swap-v1", {"small_folios": True, "mthp_kb": [256]}),
    ("v1-16K-64K", "thp-swap-v1", {"mthp_kb": [16, 64]}),
    ("v1-32M", "thp-swap-v1", {"swap_bytes": 32 << 20}),
    ("v1-48M", "thp-swap-v1", {"swap_bytes": 48 << 20}),
    ("v2", "thp-swap", {}),
    ("v2-a", "thp-swap", {"aligned_swapin": True}),
    ("v2-a-s", "thp-swap", {"aligned_swapin": True, "small_folios": True}),
    ("v2-a-s-seed3", "thp-swap", {"aligned_swapin": True, "small_folios": True, "seed": 3}),
    ("v2-a-256K", "thp-swap", {"aligned_swapin": True, "mthp_kb": [256]}),
    ("v2-a-32M", "thp-swap", {"aligned_swapin": True, "swap_bytes": 32 << 20}),
    ("v2-a-odd", "thp-swap", {"aligned_swapin": True, "swap_bytes": (63 << 20) + (748 << 10)}),
    # regions placed off 2 MiB with mixed sizes (--region-offset, docs/placement.md)
    ("v1-glibc-16K-64K-256K-at-128K", "thp-swap-v1", {"rng": "glibc", "mthp_kb": [16, 64, 256], "cpu": 1,
                                                      "region_offset": [128 << 10, 0]}),
    ("v1-s-64K-2M-at-1028K", "thp-swap-v1", {"small_folios": True, "mthp_kb": [64, 2048],
                                             "region_offset": [1028 << 10, 12 << 10]}),
    ("v2-a-s-16K-64K-256K-1M-at-704K", "thp-swap", {"aligned_swapin": True, "small_folios": True,
                                                   "mthp_kb": [16, 64, 256, 1024],
                                                   "region_offset": [704 << 10, 0]}),
    ("v2-a-all-at-1472K", "thp-swap", {"aligned_swapin": True,
                                       "mthp_kb": [16, 32, 64, 128, 256, 512, 1024, 2048],
                                       "region_offset": [1472 << 10, 0]}),
    # several zram devices (docs/kernel-findings.md F6)
    ("v1-s-2x32M", "thp-swap-v1", {"small_folios": True, "swap_bytes": 32 << 20, "swap_prio": 5,
                                   "extra_swap": [{"bytes": 32 << 20, "kind": "zram", "prio": 5}]}),
    ("v1-16M-over-64M", "thp-swap-v1", {"swap_bytes": 16 << 20, "swap_prio": 10,
                                        "extra_swap": [{"bytes": 64 << 20, "kind": "zram", "prio": 1}]}),
    ("v2-a-3dev", "thp-swap", {"aligned_swapin": True, "swap_bytes": 16 << 20,
                               "extra_swap": [{"bytes": 16 << 20, "kind": "zram", "prio": -1},
                                              {"bytes": 32 << 20, "kind": "zram", "prio": -1}]}),
]


def _params(wl: str, opts: dict) -> WorkloadParams:
    wp = WorkloadParams(workload=wl)
    for k, v in opts.items():
        setattr(wp, k, v)
    return wp


def kernel_variants() -> list:
    return [(label, _params(wl, opts)) for label, wl, opts in KERNEL_VARIANTS]


def pinned(res: dict) -> list:
    """The per-iteration figures a golden file pins: counts per size and the layout hash."""
    return [{"sizes": {kb: [s["swpout"], s["swpout_fallback"], s["swpin"]] for kb, s in it["sizes"].items()},
             "layout_hash": it["layout_hash"]} for it in res["iterations"]]


def record_kernel_golden(path: str, progress=None) -> dict:
    from .kernel import harness
    out = {"kernel_release": None, "format": "per iteration: sizes kB -> [swpout, swpout_fallback, "
                                             "swpin]; layout_hash", "variants": {}}
    for label, wp in kernel_variants():
        if progress:
            progress(label)
        res, _ = harness.run_kernel(wp)
        out["kernel_release"] = res["machine"]["kernel_release"]
        out["variants"][label] = {"params": res["params"], "iterations": pinned(res)}
    write_output(path, golden_text(out), "golden file")
    return out


def golden_variants() -> list:
    return [(label, _params(wl, opts)) for label, wl, opts in VARIANTS]


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
    g.add_argument("--policy", action="append", metavar="A[,B]", default=None,
                   help="policies (repeatable or comma list; default linux-6.18)")
    g.add_argument("--dir", default="tests/golden", help="golden directory (default tests/golden)")
    g.add_argument("--check", action="store_true", help="compare with the file; exit 1 on a difference")
    g.add_argument("--reclaim", action="store_true",
                   help="the reclaim workloads' goldens instead: <dir>/reclaim/<policy>.json")
    g.add_argument("--kernel", action="store_true",
                   help="record the live kernel's results instead (root, zram): kernel-<release>.json")
    g.set_defaults(func=main)


def golden_text(data: dict) -> str:
    return json.dumps(data, indent=0, separators=(",", ":")) + "\n"


def load_golden(path: str) -> dict:
    """A golden file, checked before anything runs: a JSON object whose
    "variants" maps each label to an object. ParamError names the problem."""
    if not os.path.lexists(path):
        raise ParamError(f"no golden file {shown_path(path)}")
    data = load_json_file(path, "golden file")
    if not isinstance(data, dict):
        raise ParamError(f"golden file '{shown_path(path)}' is not a JSON object")
    variants = data.get("variants")
    if not isinstance(variants, dict):
        raise ParamError(f"golden file '{shown_path(path)}' has no \"variants\" object")
    bad = [k for k, v in variants.items() if not isinstance(v, dict)]
    if bad:
        raise ParamError(f"golden file '{shown_path(path)}': variant {shown(bad[0])} is not an object")
    return data


def main(a) -> int:
    from .params import parse_policy_list
    policies = parse_policy_list(a.policy or ["linux-6.18"])
    if not os.path.isdir(a.dir):
        raise ParamError(f"golden directory '{shown_path(a.dir)}' does not exist")
    if a.kernel:
        import platform
        release = platform.release().split("-")[0].rsplit(".", 1)[0]
        path = os.path.join(a.dir, f"kernel-{release}.json")
        check_writable(path, "golden file", stdout_ok=False)
        data = record_kernel_golden(path, lambda s: print(f"golden: kernel {s}", file=sys.stderr, flush=True))
        print(f"wrote {path}: {len(data['variants'])} variants from kernel {data['kernel_release']}")
        return 0
    root = os.path.join(a.dir, "reclaim") if a.reclaim else a.dir
    if a.reclaim and not os.path.isdir(root):
        raise ParamError(f"golden directory '{shown_path(root)}' does not exist")
    # every golden file is read before anything is computed
    olds = {p: load_golden(golden_path(p, root)) for p in policies} if a.check else {}
    rc = 0
    for policy in policies:
        rc |= _golden_one(policy, root, olds.get(policy), a.reclaim)
    return rc


def _golden_one(policy: str, root: str, old: dict | None, reclaim: bool = False) -> int:
    """Checks policy's goldens against `old`, or (old None) writes them."""
    if reclaim:
        from . import reclaim as _reclaim
        compute = _reclaim.compute_golden
    else:
        compute = compute_golden
    path = golden_path(policy, root)
    if old is not None:
        data = compute(policy)
        bad = [k for k in data["variants"] if old["variants"].get(k) != data["variants"][k]]
        for k in bad:
            print(f"golden {policy} {k}: differs", file=sys.stderr)
        print(f"golden {policy}: {len(data['variants']) - len(bad)} variants agree, {len(bad)} differ")
        return 1 if bad else 0
    check_writable(path, "golden file", stdout_ok=False)
    data = compute(policy)
    write_output(path, golden_text(data), "golden file")
    print(f"wrote {path}: {len(data['variants'])} variants")
    return 0
