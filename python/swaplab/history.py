"""swaplab history: one workload over every allocator policy, one row each.

Runs the workload on the model once per policy (default: every registered
policy, in registry order - the kernel generations, then the baselines;
policies that do not model the --device kind are skipped, with the reason)
and prints, per policy and per enabled mTHP size, the mean, maximum and
last-10-iterations fallback %, the order-0 allocation failures and the run
time. --json writes the rows with each policy's per-iteration fallback
series (null where an iteration swapped nothing out at a size: 0/0); --plot
draws those series through plot.py (matplotlib: PNG, SVG or PDF).
"""
from __future__ import annotations

import datetime as _dt
import sys

from . import __version__, _core
from .model import run_model
from .params import (ParamError, WorkloadParams, format_size, add_workload_options, params_from_args,
                     parse_policy_list)
from .results import check_outputs, machine_info, write_json
from . import report

SCHEMA = "swaplab.history/1"


def add_parsers(sub) -> None:
    h = sub.add_parser("history", help="a workload over every policy: fallback per generation",
                       description="Runs a workload on the model once per allocator policy (default: "
                                   "all, in history order) and prints one row per policy: mean, max "
                                   "and last-10-iterations fallback %% per enabled size, order-0 "
                                   "allocation failures, run time.")
    h.add_argument("workload", help="workload name (swaplab workloads)")
    add_workload_options(h, policy=False)
    h.add_argument("--policy", "--policies", dest="policies", action="append", metavar="A[,B]",
                   default=None,
                   help="policies to run (repeatable or comma list; default: all; swaplab policies)")
    h.add_argument("--plot", metavar="PATH",
                   help="draw fallback %% per iteration, one line per policy: PATH.png, .svg or .pdf "
                        "(needs matplotlib)")
    h.add_argument("--json", metavar="PATH", help="write rows and per-iteration series as JSON ('-' for stdout)")
    h.set_defaults(func=main)


# ------------------------------------------------------------------ input

def parse_policies(values) -> list:
    """--policy values -> policy names (params.parse_policy_list); None -> every policy."""
    if values is None:
        return [p["name"] for p in _core.policies()]
    return parse_policy_list(values)


# ------------------------------------------------------------------ running

def policy_row(policy: str, kernel: str, res: dict) -> dict:
    """One policy's row: the summary per size, order-0 failures, time and the
    per-iteration fallback % series per size."""
    sizes = [str(kb) for kb in res["sizes_kb"]]
    return {
        "policy": policy,
        "kernel": kernel,
        "summary": {kb: res["summary"][kb] for kb in sizes},
        "order0_alloc_fail": sum(it["order0"]["alloc_fail"] or 0 for it in res["iterations"]),
        "seconds": res["seconds"],
        "layout_hash": res["layout"]["hash"],
        # per iteration; None where nothing was swapped out at the size (0/0)
        "series": {kb: [it["sizes"][kb]["fallback_pct"]
                        if it["sizes"][kb]["swpout"] + it["sizes"][kb]["swpout_fallback"] else None
                        for it in res["iterations"]] for kb in sizes},
        "extents": res.get("extents"),
    }


def refusals(wp: WorkloadParams, policies: list) -> dict:
    """policy -> why it cannot run these parameters (a device kind it does not model)."""
    out = {}
    for pol in policies:
        try:
            _core.validate(policy=pol, **wp.core_kwargs())
        except ValueError as e:
            out[pol] = str(e)
    return out


def select_policies(wp: WorkloadParams, policies: list, explicit: bool) -> tuple:
    """(policies to run, {skipped policy: reason}). A policy named in
    --policies that cannot run is bad input; of all policies, it is skipped."""
    refused = refusals(wp, policies)
    if refused and explicit:
        raise ParamError(next(iter(refused.values())))
    return [p for p in policies if p not in refused], refused


def run_history(wp: WorkloadParams, policies: list, progress=None, skipped: dict | None = None) -> dict:
    kernels = {p["name"]: p["kernel"] for p in _core.policies()}
    rows = []
    for i, pol in enumerate(policies, 1):
        res, _ = run_model(wp, pol)
        rows.append(policy_row(pol, kernels.get(pol, ""), res))
        if progress:
            s = rows[-1]["summary"]
            progress(f"[{i}/{len(policies)}] {pol}: "
                     + ", ".join(f"{report.size_label(int(kb))} mean {v['mean_fallback_pct']:.2f}%"
                                 for kb, v in s.items())
                     + f", {res['seconds'] * 1000:.1f} ms")
    return {"schema": SCHEMA, "swaplab_version": __version__, "source": "model",
            "workload": wp.workload, "params": wp.as_json(),
            "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            "machine": machine_info(), "sizes_kb": list(wp.mthp_kb), "iterations": wp.iterations,
            "policies": list(policies), "rows": rows,
            "skipped": [{"policy": p, "reason": r} for p, r in (skipped or {}).items()]}


# ------------------------------------------------------------------ printing

def describe(h: dict) -> str:
    """The workload and its options in one line (table header, plot title)."""
    p = h["params"]
    size = (f"{p['swap_bytes'] // (1 << 20)}M" if p["swap_bytes"] % (1 << 20) == 0
            else f"{p['swap_bytes'] // 1024}K")
    swap = f"{p.get('device', 'zram')} swap {size}"
    if p.get("swap_prio", -1) >= 0:
        swap += f" prio {p['swap_prio']}"
    for x in p.get("extra_swap", []):
        swap += f" + {x['kind']} {format_size(x['bytes'])}" + (f" prio {x['prio']}" if x["prio"] >= 0 else "")
    parts = [h["workload"], swap, "mTHP " + ",".join(report.size_label(kb) for kb in h["sizes_kb"])]
    if p["small_folios"]:
        parts.append("-s")
    if p["aligned_swapin"]:
        parts.append("-a")
    if p["region_a_bytes"]:
        parts.append(f"region A {p['region_a_bytes'] // 1024}K")
    if p["region_b_bytes"]:
        parts.append(f"region B {p['region_b_bytes'] // 1024}K")
    if any(p.get("region_offset", [])):
        parts.append("regions at " + ",".join(f"{b // 1024}K" for b in p["region_offset"])
                     + (" (aslr)" if p.get("region_offset_aslr") else ""))
    parts += [f"seed {p['seed']}", f"rng {p['rng']}", f"cpu {p['cpu']}", f"{p['iterations']} iterations"]
    return ", ".join(parts)


def table_columns(h: dict) -> list:
    cols = [("policy", "policy", "{}")]
    for kb in h["sizes_kb"]:
        lab = report.size_label(kb)
        cols += [(f"{kb}.mean", f"{lab} mean%", "{:.2f}"), (f"{kb}.max", f"{lab} max%", "{:.2f}"),
                 (f"{kb}.last10", f"{lab} last10%", "{:.2f}")]
    cols += [("order0_alloc_fail", "order0 fail", "{}"), ("ms", "time ms", "{:.1f}")]
    return cols


def print_history(h: dict, out=sys.stdout) -> None:
    print(f"# history {describe(h)}", file=out)
    flat = []
    for r in h["rows"]:
        f = {"policy": r["policy"], "order0_alloc_fail": r["order0_alloc_fail"], "ms": r["seconds"] * 1000}
        for kb in h["sizes_kb"]:
            s = r["summary"][str(kb)]
            f[f"{kb}.mean"] = s["mean_fallback_pct"]
            f[f"{kb}.max"] = s["max_fallback_pct"]
            f[f"{kb}.last10"] = s["last10_mean_fallback_pct"]
        flat.append(f)
    cols = table_columns(h)
    # the policy column reads best left-aligned
    w = max([len("policy")] + [len(r["policy"]) for r in flat])
    for r in flat:
        r["policy"] = r["policy"].ljust(w)
    report.print_table(flat, [("policy", "policy".ljust(w), "{}")] + cols[1:], out=out)
    for sk in h.get("skipped", []):
        print(f"# skipped {sk['policy']}: {sk['reason']}", file=out)


# ------------------------------------------------------------------ command

def main(a) -> int:
    wp = params_from_args(a.workload, a)
    policies, skipped = select_policies(wp, parse_policies(a.policies), explicit=a.policies is not None)
    if not policies:
        raise ParamError(f"no policy models device {wp.device}")
    check_outputs([("--json", a.json), ("--plot", a.plot)])
    if a.plot:
        from .plot import check_plot_path
        check_plot_path(a.plot, "--plot")
    progress = lambda s: print(f"history: {s}", file=sys.stderr, flush=True)  # noqa: E731
    for pol, why in skipped.items():
        progress(f"skipped {pol}: {why}")
    h = run_history(wp, policies, progress=progress, skipped=skipped)
    if a.json != "-":
        print_history(h)
    if a.json:
        write_json(a.json, h)
    if a.plot:
        from .plot import history_figure, save
        save(history_figure(h), a.plot)
    return 0
