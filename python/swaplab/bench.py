"""swaplab bench: speed figures as JSON (never timed tests).

bench alloc   order-k free+alloc churn on devices of several sizes and fill
              levels (core/src/bench.c), and the wall time of a whole
              thp-swap-v1 run.
bench threads multi-threaded churn under the locks.
bench run     the wall time of whole runs against issue 16's targets.
bench compare two builds side by side (benchcompare.py).
"""
from __future__ import annotations

import os
import statistics

from . import __version__, _core
from .params import (CLUSTER_BYTES, PAGE, ParamError, WorkloadParams, format_size, parse_count, parse_size,
                     shown, split_list)
from .results import check_outputs, machine_info, write_json

SCHEMA = "swaplab.bench/1"

# Whole runs with a speed target (issue 16 item 3), timed by `bench run` and
# counted by `bench compare`: the parameters are WorkloadParams' (64 MiB of
# zram, 100 iterations, seed 1 unless named).
RUN_CASES = [
    {"name": "thp-swap-v1", "params": {"workload": "thp-swap-v1"}, "target_ms": 5.0},
    {"name": "thp-swap -a 16K-1M", "params": {"workload": "thp-swap", "aligned_swapin": True,
                                              "mthp_kb": [16, 32, 64, 128, 256, 512, 1024]},
     "target_ms": 15.0},
]


def add_parsers(bsub) -> None:
    a = bsub.add_parser("alloc", help="alloc/free churn and thp-swap-v1 run time",
                        description="Order-k alloc/free churn at several device sizes and fills; "
                                    "prints a table, writes JSON with --json.")
    a.add_argument("--policy", action="append", metavar="A[,B]", default=None,
                   help="policies (repeatable or comma list; default linux-6.18)")
    a.add_argument("--sizes", "--size", dest="sizes", default="64M,4G,1T",
                   help="device sizes, comma list (default 64M,4G,1T)")
    a.add_argument("--fills", "--fill", dest="fills", default="50,95",
                   help="fill levels in percent, comma list (default 50,95)")
    a.add_argument("--orders", default="0,4", help="allocation orders (default 0,4)")
    a.add_argument("--pairs", default="4000000", help="free+alloc pairs per case (default 4000000)")
    a.add_argument("--runs", default="5", help="thp-swap-v1 runs to time (default 5; 0 skips)")
    a.add_argument("--seed", default="1", help="seed of the churn's random picks (default 1)")
    a.add_argument("--json", metavar="PATH", help="write the JSON result ('-' for stdout only)")


    t = bsub.add_parser("threads", help="multi-threaded churn under each generation's locks",
                        description="Each thread is a CPU churning free+alloc pairs on one shared "
                                    "device under the policy's real locks; per policy and thread "
                                    "count: ops/s, scaling, latency, lock statistics, fallback.")
    t.add_argument("--policy", action="append", default=None,
                   help="policy (repeatable, or a comma list; default: every policy with a concurrent mode)")
    t.add_argument("--threads", default=None, help="thread counts (default 1,2,4,... up to the CPUs)")
    t.add_argument("--orders", default="0,4", help="one case per order (default 0,4)")
    t.add_argument("--mix", default=None, help="an extra mixed case: orders drawn from this list, e.g. 0,0,0,4")
    t.add_argument("--fills", "--fill", dest="fill", default="50,95",
                   help="fill levels in percent, comma list (default 50,95)")
    t.add_argument("--size", "--sizes", dest="size", default="4G", help="device size, one (default 4G)")
    t.add_argument("--ops", default="1000000", help="order-0 pairs per thread (order k: >> k; default 1000000)")
    t.add_argument("--seed", default="1", help="seed of the churn's random picks (default 1)")
    t.add_argument("--victims", default="any", choices=["any", "recent"],
                   help=f"which folio a pair frees: any of the CPU's (default) or one of its {_core.BT_RECENT} newest")
    t.add_argument("--json", metavar="PATH", help="write the JSON result ('-' for stdout only)")
    t.add_argument("--plot", metavar="PATH",
                   help="speedup against threads with the ideal line: PATH.png, .svg or .pdf (matplotlib); "
                        "several runs' JSON files: swaplab plot")

    w = bsub.add_parser("sweep", help="sweep throughput: cells/s on one worker and on every core",
                        description="Runs the same sweep (thp-swap-v1 on linux-6.18, one cell per "
                                    "seed) on one worker and on --workers; prints cells/s, the "
                                    "speedup and the parallel efficiency (speedup / workers).")
    w.add_argument("--cells", default="200", help="cells (seeds) in the sweep (default 200)")
    w.add_argument("--iterations", default="100", help="iterations per cell (default 100)")
    w.add_argument("--workers", default=None, help="workers of the parallel run (default: every core)")
    w.add_argument("--json", metavar="PATH", help="write the JSON result ('-' for stdout only)")

    r = bsub.add_parser("run", help="wall time of whole runs against their targets",
                        description="Times the whole runs of issue 16 (" +
                                    "; ".join(f"{c['name']}: target {c['target_ms']:g} ms" for c in RUN_CASES) +
                                    "), the cases alternating, each --runs times; per case the "
                                    "median, min and max of the run's own time (sl_run's, the C "
                                    "core alone).")
    r.add_argument("--policy", default="linux-6.18", help="policy (default linux-6.18)")
    r.add_argument("--runs", default="7", help="runs of each case (default 7)")
    r.add_argument("--json", metavar="PATH", help="write the JSON result ('-' for stdout only)")

    from . import benchcompare
    benchcompare.add_parser(bsub)


def run_cases(policy: str, runs: int, progress=None) -> dict:
    secs = [[] for _ in RUN_CASES]
    for _ in range(runs):
        for k, c in enumerate(RUN_CASES):
            wp = WorkloadParams(**c["params"])
            secs[k].append(_core.run(policy=policy, **wp.core_kwargs())["seconds"])
    results = []
    for c, s in zip(RUN_CASES, secs):
        med = statistics.median(s)
        row = {"case": c["name"], "params": WorkloadParams(**c["params"]).as_json(), "runs": runs,
               "seconds": s, "seconds_median": med, "seconds_min": min(s), "seconds_max": max(s),
               "target_ms": c["target_ms"], "met": med * 1000 <= c["target_ms"]}
        results.append(row)
        if progress:
            progress(row)
    return {"schema": SCHEMA, "bench": "run", "swaplab_version": __version__, "policy": policy,
            "machine": machine_info(), "results": results}


def main_run(a) -> int:
    from .params import check_policy_name
    check_policy_name(a.policy)
    runs = parse_count(a.runs, "--runs", 1, 10000)
    check_outputs([("--json", a.json)])
    quiet = a.json == "-"

    def progress(r):
        if not quiet:
            print(f"{r['case']}: median {r['seconds_median'] * 1000:.2f} ms "
                  f"[{r['seconds_min'] * 1000:.2f}-{r['seconds_max'] * 1000:.2f}] over {r['runs']} runs, "
                  f"target {r['target_ms']:g} ms: {'met' if r['met'] else 'NOT met'}", flush=True)

    out = run_cases(a.policy, runs, progress)
    if a.json:
        write_json(a.json, out)
    return 0


def main_sweep(a) -> int:
    import os
    from . import sweeps as sweep
    cells = parse_count(a.cells, "--cells", 1, 10 ** 7)
    iters = parse_count(a.iterations, "--iterations", 1, 100000)
    workers = parse_count(a.workers, "--workers", 1, 4096) if a.workers else (os.cpu_count() or 1)
    check_outputs([("--json", a.json)])
    out = sweep.bench(cells, iters, workers)
    if a.json != "-":
        for r in out["results"]:
            print(f"{r['workers']:>3} workers: {r['cells_per_second']:8.1f} cells/s "
                  f"({r['wall_seconds']:.2f} s, workers busy {100 * r['busy_fraction']:.0f} %)")
        print(f"speedup {out['speedup']:.2f}x on {workers} workers, parallel efficiency "
              f"{out['parallel_efficiency']:.2f}")
    if a.json:
        write_json(a.json, out)
    return 0


def _list(text: str, conv, what: str, unique: bool = True) -> list:
    """A comma list (params.split_list), each item converted; (unique) no
    value twice."""
    vals = [conv(t, what) for t in split_list(text, what)]
    if unique and len(set(vals)) != len(vals):
        raise ParamError(f"{what} '{shown(text)}' names a value twice")
    return vals


def _size(t: str, what: str) -> int:
    from .params import MAX_SWAP
    b = parse_size(t, what)
    if b < CLUSTER_BYTES:
        raise ParamError(f"{what} {shown(t)} is smaller than one cluster ({format_size(CLUSTER_BYTES)})")
    if b > MAX_SWAP:
        raise ParamError(f"{what} {shown(t)} is larger than the model supports here (16T)")
    return b


def _threads(t: str, what: str) -> int:
    return parse_count(t, what, 1, _core.MAX_CPUS)


def _order(t: str, what: str) -> int:
    o = parse_count(t, what)
    if o > _core.PMD_ORDER:
        raise ParamError(f"{what} {shown(t)} is above {_core.PMD_ORDER} ({format_size(CLUSTER_BYTES)})")
    return o


def _fill(t: str, what: str) -> int:
    f = parse_count(t, what)
    if not 0 < f < 100:
        raise ParamError(f"{what} {shown(t)} is not between 1 and 99")
    return f


def check_alloc_cases(policy: str, sizes: list, fills: list, orders: list, seed: int) -> None:
    """Every case of bench alloc can run, checked before the first runs:
    the fill leaves room for one allocation of each order on each size, and
    the policy makes allocations of each order at all (a small probe)."""
    for size in sizes:
        for fill in fills:
            room = (size // 4096) * fill // 100
            big = [o for o in orders if (1 << o) > room]
            if big:
                raise ParamError(f"--fills {fill} on a {format_size(size)} device leaves room for "
                                 f"no order-{big[0]} allocation ({format_size(4096 << big[0])})")
    for order in orders:
        try:
            _core.bench_alloc(policy, 4 * 512, order, 0.5, 1, seed)
        except RuntimeError as e:
            raise ParamError(f"--orders {order}: policy {policy}: {e}") from None


def run_alloc(policy: str, sizes: list, fills: list, orders: list, pairs: int, runs: int,
              seed: int, progress=None) -> dict:
    results = []
    for size in sizes:
        for order in orders:
            for fill in fills:
                n = max(1, pairs >> order) if order else pairs
                r = _core.bench_alloc(policy, size // PAGE, order, fill / 100.0, n, seed)
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
    if a.bench == "threads":
        return main_threads(a)
    if a.bench == "sweep":
        return main_sweep(a)
    if a.bench == "run":
        return main_run(a)
    if a.bench == "compare":
        from .benchcompare import main_compare
        return main_compare(a)
    from .params import parse_policy_list
    policies = parse_policy_list(a.policy or ["linux-6.18"])
    sizes = _list(a.sizes, _size, "--sizes")
    fills = _list(a.fills, _fill, "--fills")
    orders = _list(a.orders, _order, "--orders")
    pairs = parse_count(a.pairs, "--pairs", 1, 10 ** 12)
    runs = parse_count(a.runs, "--runs", 0, 1000)
    seed = parse_count(a.seed, "--seed")
    check_outputs([("--json", a.json)])
    for policy in policies:            # every case of every policy, before any runs
        check_alloc_cases(policy, sizes, fills, orders, seed)
    quiet = a.json == "-"

    def progress(row):
        if not quiet:
            print(f"{row['size']:>5} order {row['order']} fill {row['fill_pct']:>2}%: "
                  f"{row['ops_per_sec'] / 1e6:8.2f} M pairs/s  {row['ns_per_op']:7.1f} ns/pair  "
                  f"(fill took {row['fill_seconds']:.2f} s, {row['failures']} failures)", flush=True)

    outs = []
    for policy in policies:
        if not quiet and len(policies) > 1:
            print(f"# {policy}", flush=True)
        out = run_alloc(policy, sizes, fills, orders, pairs, runs, seed, progress)
        if not quiet and "thp_swap_v1" in out:
            t = out["thp_swap_v1"]
            print(f"thp-swap-v1, {t['iterations']} iterations: min {t['seconds_min'] * 1000:.1f} ms, "
                  f"median {t['seconds_median'] * 1000:.1f} ms over {t['runs']} runs")
        outs.append(out)
    if a.json:
        # one policy: its result as before; several: {"runs": [one per policy]}
        write_json(a.json, outs[0] if len(outs) == 1 else
                   {"schema": SCHEMA, "bench": "alloc", "swaplab_version": __version__, "runs": outs})
    return 0


MAX_MIX = 10              # the core's order list holds this many (SL_NR_ORDERS)
RING_MAX = 2 ** 32 - 1    # folios a thread's ring holds


def machine_memory() -> int:
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError):
        return 0


def check_thread_cases(size: int, fills: list, threads: list, cases: list, ops: int) -> None:
    """Every case of bench threads fits, checked before the first runs:
    a thread's folio ring (the folios the fill gives its CPU, as
    bench_threads.c sizes it) holds at most RING_MAX, and the rings, the
    latency samples and the slot map together take at most half of this
    machine's memory."""
    pages = size // 4096
    mem = machine_memory()
    for fill in fills:
        for _, orders in cases:
            per = int(pages * fill / 100) >> min(orders)
            for t in threads:
                cap = per // t + 2
                if cap > RING_MAX:
                    raise ParamError(f"--size {format_size(size)} at fill {fill}% with {t} thread"
                                     f"{'s' if t > 1 else ''} gives each {cap} folios; the benchmark "
                                     f"holds at most {RING_MAX} (a smaller --size, a lower --fill or "
                                     "more threads)")
                n_ops = max(1, ops >> max(orders)) if max(orders) else ops
                need = t * (cap * 16 + (n_ops // 8 + 1) * 8) + pages + (pages // 512) * 64
                if mem and need > mem // 2:
                    raise ParamError(f"--size {format_size(size)} at fill {fill}% with {t} thread"
                                     f"{'s' if t > 1 else ''} and --ops {ops} needs about "
                                     f"{need / 2 ** 30:.1f} GiB, more than half of this machine's "
                                     f"{mem / 2 ** 30:.1f} GiB")


def concurrent_policies() -> list:
    return [p["name"] for p in _core.policies() if p["concurrent"]]


def thread_targets(results: list) -> list:
    """The issue's targets, evaluated on what was measured."""
    out = []
    def find(pol, case, fill, threads):
        for r in results:
            if (r["policy"], r["case"], r["fill_pct"], r["threads"]) == (pol, case, fill, threads):
                return r
        return None
    for pol in ("linux-6.15", "linux-6.18"):
        r2 = find(pol, "order 0", 50, 2)
        if r2:
            out.append({"target": f"{pol} order-0 churn at 50 % fill: >= 1.8x at 2 threads",
                        "measured": round(r2["scaling"], 3), "met": r2["scaling"] >= 1.8})
        old = find("linux-6.12", "order 0", 50, 2)
        if r2 and old:
            a = old["locks"]["device"]["contended"]
            b = r2["locks"]["device"]["contended"]
            out.append({"target": f"{pol}: contended device-lock acquisitions >= 10x fewer than linux-6.12's",
                        "measured": f"{b} vs {a}", "met": a >= 10 * b})
    return out


def run_threads(policies, threads, cases, fills, size, ops, seed, progress=None, recent=False) -> dict:
    results = []
    for pol in policies:
        for case, orders in cases:
            for fill in fills:
                base = None
                n_ops = max(1, ops >> max(orders)) if max(orders) else ops
                for t in threads:
                    r = _core.bench_threads(pol, size // PAGE, t, fill / 100.0, orders, n_ops, seed,
                                            recent=recent)
                    large = [o for o in set(orders) if o > 0]
                    att = sum(r["alloc_ok"][o] + r["alloc_fail"][o] for o in large)
                    fails = sum(r["alloc_fail"][o] for o in large)
                    base = base or r["ops_per_sec"]
                    row = {"policy": pol, "case": case, "orders": orders, "fill_pct": fill, "threads": t,
                           "ops_per_thread": n_ops, "ops_per_sec": r["ops_per_sec"],
                           "scaling": r["ops_per_sec"] / base if base else 0.0,
                           "lat_p50_ns": r["lat_p50_ns"], "lat_p99_ns": r["lat_p99_ns"],
                           "lat_max_ns": r["lat_max_ns"], "locks": r["locks"],
                           "fallback_pct": round(100.0 * fails / att, 4) if att else 0.0,
                           "order0_failures": r["alloc_fail"][0]}
                    results.append(row)
                    if progress:
                        progress(row)
    return {"schema": SCHEMA, "bench": "threads", "swaplab_version": __version__,
            "machine": machine_info(), "size_bytes": size, "seed": seed,
            "victims": "recent" if recent else "any", "results": results,
            "targets": thread_targets(results)}


def main_threads(a) -> int:
    known = concurrent_policies()
    from .params import parse_policy_list
    policies = parse_policy_list(a.policy or [",".join(known)])
    for name in policies:
        if name not in known:
            raise ParamError(f"policy {name} has no concurrent mode (those that do: {', '.join(known)})")
    cpus = os.cpu_count() or 1
    if a.threads is not None:
        threads = _list(a.threads, _threads, "--threads")
    else:
        threads, t = [], 1
        while t <= cpus:
            threads.append(t)
            t *= 2
    cases = [(f"order {o}", [o]) for o in _list(a.orders, _order, "--orders")]
    if a.mix is not None:
        mix = _list(a.mix, _order, "--mix", unique=False)
        if len(mix) > MAX_MIX:
            raise ParamError(f"--mix has {len(mix)} entries; it takes at most {MAX_MIX}")
        cases.append(("mix " + ",".join(map(str, mix)), mix))
    fills = _list(a.fill, _fill, "--fill")
    size = _size(a.size, "--size")
    ops = parse_count(a.ops, "--ops", 1, 10 ** 12)
    seed = parse_count(a.seed, "--seed")
    check_outputs([("--json", a.json), ("--plot", a.plot)])
    if a.plot:
        from .plot import check_plot_path
        check_plot_path(a.plot, "--plot")
    check_thread_cases(size, fills, threads, cases, ops)
    quiet = a.json == "-"

    def progress(r):
        if not quiet:
            lk = r["locks"]
            print(f"{r['policy']:>11} {r['case']:>8} fill {r['fill_pct']:>2}% threads {r['threads']:>2}: "
                  f"{r['ops_per_sec'] / 1e6:7.2f} M pairs/s x{r['scaling']:.2f}  p50 {r['lat_p50_ns']:.0f} "
                  f"p99 {r['lat_p99_ns']:.0f} max {r['lat_max_ns'] / 1000:.0f}us  device lock "
                  f"{lk['device']['acquisitions']} acq / {lk['device']['contended']} contended, cluster "
                  f"{lk['cluster']['contended']} contended, {lk['cluster']['trylock_failed']} skipped, "
                  f"fallback {r['fallback_pct']:.2f}%", flush=True)

    out = run_threads(policies, threads, cases, fills, size, ops, seed, progress,
                      recent=a.victims == "recent")
    if not quiet:
        for t in out["targets"]:
            print(f"target: {t['target']}: measured {t['measured']} -> {'met' if t['met'] else 'NOT met'}")
    if a.json:
        write_json(a.json, out)
    if a.plot:
        from .plot import save, speedup_figure
        save(speedup_figure([out]), a.plot)
    return 0
