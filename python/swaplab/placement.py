"""swaplab placement: one workload on a model policy at many region offsets
(docs/placement.md). The same operations at every offset; only where region
A (and B) starts modulo 2 MiB changes, so the spread of the fallback is what
placement alone moves."""
from __future__ import annotations

import statistics
import sys

from .params import ASLR_STEP, REGION_WINDOW, ParamError, add_workload_options, format_size, \
    params_from_args, parse_region_offset, shown
from .results import check_outputs, write_json
from . import report

SCHEMA = "swaplab.placement/1"


def parse_offsets(text: str) -> list:
    """'all' -> the 32 multiples of 64K below 2M; else a comma list of region A offsets."""
    if text.strip().lower() == "all":
        return list(range(0, REGION_WINDOW, ASLR_STEP))
    out = []
    for part in text.split(","):
        offs, aslr = parse_region_offset(part)
        if aslr:
            raise ParamError(f"--offsets '{shown(text)}': name offsets or 'all', not aslr")
        out.append(offs[0])
    return out


def placement_study(wp, policy: str, offsets: list) -> dict:
    """Runs wp with region A at each offset (region B as wp has it). Returns
    per offset the mean fallback % of each size, and per size the spread."""
    from .model import run_model
    rows = []
    for off in offsets:
        wp.region_offset = [off, wp.region_offset[1]]
        wp.region_offset_aslr = False
        res, _ = run_model(wp, policy)
        rows.append({"offset": off, "layout_hash": res["layout"]["hash"],
                     "fallback_pct": {kb: round(s["mean_fallback_pct"], 3)
                                      for kb, s in res["summary"].items()}})
    spread = {}
    for kb in rows[0]["fallback_pct"] if rows else []:
        v = [r["fallback_pct"][kb] for r in rows]
        spread[kb] = {"min": min(v), "max": max(v), "mean": round(statistics.fmean(v), 3),
                      "stdev": round(statistics.pstdev(v), 3),
                      "min_at": rows[v.index(min(v))]["offset"], "max_at": rows[v.index(max(v))]["offset"]}
    params = wp.as_json()
    params.pop("region_offset", None)
    params.pop("region_offset_aslr", None)
    return {"schema": SCHEMA, "policy": policy, "workload": wp.workload, "params": params,
            "region_b_offset": wp.region_offset[1], "offsets": rows, "spread": spread,
            "distinct_layouts": len({r["layout_hash"] for r in rows})}


def add_parsers(sub) -> None:
    p = sub.add_parser("placement", help="a workload at many region offsets: how placement moves the fallback",
                       description="Runs the workload on a model policy with region A at each offset "
                                   "(default: all 32 multiples of 64K below 2M) and prints the mean "
                                   "fallback %% per size at each, then per size min / max / spread.")
    p.add_argument("workload", help="workload name (swaplab workloads)")
    add_workload_options(p)
    p.add_argument("--offsets", default="all", help="'all' (every 64K multiple below 2M) or a list, e.g. 0,64K,1472K")
    p.add_argument("--json", metavar="PATH", help="write the study as JSON ('-' for stdout)")
    p.set_defaults(func=_cmd_placement)


def _cmd_placement(a) -> int:
    try:
        offsets = parse_offsets(a.offsets)
        wp = params_from_args(a.workload, a)
        if wp.region_offset_aslr or wp.region_offset[0]:
            raise ParamError("--region-offset of region A: the study sets it (use --offsets)")
        check_outputs([("--json", a.json)])
    except ParamError as e:
        sys.stderr.write(f"swaplab placement: error: {e}\n")
        return 2
    s = placement_study(wp, a.policy, offsets)
    if a.json != "-":
        sizes = list(s["spread"])
        rows = [dict({"offset": format_size(r["offset"]) if r["offset"] else "0"},
                     **{kb: r["fallback_pct"][kb] for kb in sizes}) for r in s["offsets"]]
        cols = [("offset", "region A at", "{}")] + [(kb, f"{report.size_label(int(kb))} fb%", "{:.2f}")
                                                    for kb in sizes]
        report.print_table(rows, cols)
        for kb, v in s["spread"].items():
            print(f"{report.size_label(int(kb))}: mean fallback from {v['min']:.2f}% (at "
                  f"{format_size(v['min_at']) if v['min_at'] else '0'}) to {v['max']:.2f}% (at "
                  f"{format_size(v['max_at']) if v['max_at'] else '0'}), mean {v['mean']:.2f}%, "
                  f"stdev {v['stdev']:.2f}; {s['distinct_layouts']} distinct final layouts")
    if a.json:
        write_json(a.json, s)
    return 0
