"""swaplab bench: speed figures as JSON (never timed tests).

bench alloc   order-k free+alloc churn on devices of several sizes and fill
              levels (core/src/bench.c), and the wall time of a whole
              thp-swap-v1 run.
"""
from __future__ import annotations

import statistics
import sys

from . import __version__, _core
from .params import ParamError, WorkloadParams, check_policy_name, format_size, parse_count, parse_size
from .results import check_writable, machine_info, write_json
from . import report

SCHEMA = "swaplab.bench/1"


def add_parsers(bsub) -> None:
    a = bsub.add_parser("alloc", help="alloc/free churn and thp-swap-v1 run time",
                        description="Order-k alloc/free churn at several device sizes and fills; "
                                    "prints a table, writes JSON with --json.")
    a.add_argument("--policy", default="linux-6.18")
    a.add_argument("--sizes", default="64M,4G,1T", help="device sizes (default 64M,4G,1T)")
    a.add_argument("--fills", default="50,95", help="fill levels in percent (default 50,95)")
    a.add_argument("--orders", default="0,4", help="allocation orders (default 0,4)")
    a.add_argument("--pairs", default="4000000", help="free+alloc pairs per case (default 4000000)")
    a.add_argument("--runs", default="5", help="thp-swap-v1 runs to time (default 5; 0 skips)")
    a.add_argument("--seed", default="1")
    a.add_argument("--json", metavar="PATH", help="write the JSON result ('-' for stdout only)")


def _list(text: str, conv, what: str) -> list:
    items = [t for t in (text or "").split(",") if t.strip()]
    if not items:
        raise ParamError(f"{what} '{text}' is empty")
    return [conv(t.strip(), what) for t in items]


def _order(t: str, what: str) -> int:
    o = parse_count(t, what)
    if o > 9:
        raise ParamError(f"{what} {t} is above 9 (2M)")
    return o


def _fill(t: str, what: str) -> int:
    f = parse_count(t, what)
    if not 0 < f < 100:
        raise ParamError(f"{what} {t} is not between 1 and 99")
    return f


def run_alloc(policy: str, sizes: list, fills: list, orders: list, pairs: int, runs: int,
              seed: int, progress=None) -> dict:
    results = []
    for size in sizes:
        for order in orders:
            for fill in fills:
                n = max(1, pairs >> order) if order else pairs
                r = _core.bench_alloc(policy, size // 4096, order, fill / 100.0, n, seed)
                row = {"size": format_size(size), "size_bytes": size, "order": order, "fill_pct": fill}
                row.update(r)
                results.append(row)
                if progress:
                    progress(row)
    out = {"schema": SCHEMA, "bench": "alloc", "swaplab_version": __version__, "policy": policy,
           "machine": machine_info(), "seed": seed, "results": results}
    if runs:
        wp = WorkloadParams(workload="thp-swap-v1")
        secs = []
        for _ in range(runs):
            secs.append(_core.run(policy=policy, **wp.core_kwargs())["seconds"])
        out["thp_swap_v1"] = {"iterations": wp.iterations, "runs": runs,
                              "seconds_min": min(secs), "seconds_median": statistics.median(secs)}
    return out


def main(a) -> int:
    check_policy_name(a.policy)
    sizes = _list(a.sizes, parse_size, "--sizes")
    for s in sizes:
        if s < 2 << 20:
            raise ParamError(f"--sizes {format_size(s)} is smaller than one cluster (2M)")
    fills = _list(a.fills, _fill, "--fills")
    orders = _list(a.orders, _order, "--orders")
    pairs = parse_count(a.pairs, "--pairs")
    runs = parse_count(a.runs, "--runs")
    seed = parse_count(a.seed, "--seed")
    if a.json:
        check_writable(a.json, "--json")
    quiet = a.json == "-"

    def progress(row):
        if not quiet:
            print(f"{row['size']:>5} order {row['order']} fill {row['fill_pct']:>2}%: "
                  f"{row['ops_per_sec'] / 1e6:8.2f} M pairs/s  {row['ns_per_op']:7.1f} ns/pair  "
                  f"(fill took {row['fill_seconds']:.2f} s, {row['failures']} failures)", flush=True)

    out = run_alloc(a.policy, sizes, fills, orders, pairs, runs, seed, progress)
    if not quiet and "thp_swap_v1" in out:
        t = out["thp_swap_v1"]
        print(f"thp-swap-v1, {t['iterations']} iterations: min {t['seconds_min'] * 1000:.1f} ms, "
              f"median {t['seconds_median'] * 1000:.1f} ms over {t['runs']} runs")
    if a.json:
        write_json(a.json, out)
    return 0
