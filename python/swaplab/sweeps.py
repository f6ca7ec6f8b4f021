"""swaplab sweep: a grid of model runs, one table (docs/sweep.md). The module
is sweeps.py because swaplab.sweep is the Python API's function.

A spec names, for each workload option, one value or a list of values (a
grid axis): workloads, policies, devices, swap sizes, mTHP sets, seeds and
the other workload options. Every combination is a cell; every cell runs
once, in-process (the C core) on a local process pool over all cores, or on
Ray with --ray. The output directory holds

  cells.jsonl   one line per finished cell (its rows): a re-run skips those
  table.csv     one row per cell and enabled mTHP size, in grid order
  table.parquet the same, where pyarrow is installed
  agg.csv       the rows aggregated over seeds: mean, sd, and per cell
                Welch's t-test against the first policy (stats.py)
  sweep.json    metadata: versions, machine, spec, timing (cells/s)

The table is a function of the spec alone (no times in it), so the process
pool and Ray give the same file.
"""
from __future__ import annotations

import csv
import datetime as _dt
import hashlib
import io
import itertools
import json
import math
import os
import sys
import time

from . import __version__, _core
from .params import (OPTION_DEFAULTS, ParamError, format_size, parse_count, params_from_options,
                     size_to_order, split_list)
from .results import check_writable, machine_info, write_json, write_output
from . import stats

SCHEMA = "swaplab.sweep/1"

# Grid axes, in the order cells are enumerated (the last varies fastest)
# and columns are written. Every key a spec may hold, with its default.
AXES = ["workload", "policy", "device", "swap_size", "mthp", "small_folios", "aligned_swapin",
        "rng", "iterations", "region_a_size", "region_b_size", "region_offset", "cpu", "cpus", "migrate_every",
        "seed"]
DEFAULTS = {"workload": "thp-swap-v1", "policy": "linux-6.18",
            **{k: v for k, v in OPTION_DEFAULTS.items() if k in AXES}}
# Keys a spec may not name (none at present; an option that is not yet a
# workload option would be listed here with the reason).
RESERVED: dict = {}
OTHER_KEYS = {"metrics"}

ROW_COLUMNS = ["cell", *AXES, "size_kb", "iterations_with_data", "mean_fallback_pct", "sd_fallback_pct", "max_fallback_pct",
               "last10_mean_fallback_pct", "swpout", "swpout_fallback", "swpout_fallback_free",
               "swpout_fallback_aligned", "order0_alloc_fail", "order0_alloc_fail_free", "final_layout_hash"]
FRAG_COLUMNS = ["final_free_slots", "final_unusable_index", "final_fragmentation_index",
                "final_free_extents", "final_bluestore_score", "mean_bluestore_score"]


# ------------------------------------------------------------------ spec

def load_toml(path: str) -> dict:
    try:
        import tomllib
    except ImportError:  # Python < 3.11
        import tomli as tomllib
    try:
        with open(path, "rb") as f:
            return tomllib.load(f)
    except OSError as e:
        raise ParamError(f"cannot read spec '{path}': {e.strerror}") from None
    except tomllib.TOMLDecodeError as e:
        raise ParamError(f"spec '{path}' is not TOML: {e}") from None


def normalize_spec(raw: dict) -> dict:
    """{key: value or list} -> {axis: [values]} for every axis, plus
    'metrics'. Refuses unknown and reserved keys and empty lists."""
    spec = {}
    for k, v in raw.items():
        if k in RESERVED:
            raise ParamError(f"spec key '{k}': {RESERVED[k]}")
        if k not in AXES and k not in OTHER_KEYS:
            raise ParamError(f"unknown spec key '{k}' (known: {', '.join(AXES + sorted(OTHER_KEYS))})")
        if k == "metrics":
            if not isinstance(v, bool):
                raise ParamError(f"spec key 'metrics' must be true or false, not {v!r}")
            continue
        vals = list(v) if isinstance(v, (list, tuple)) else [v]
        if not vals:
            raise ParamError(f"spec key '{k}' is an empty list")
        if any(isinstance(x, (dict, list)) and not (k == "mthp" and isinstance(x, list)) for x in vals):
            raise ParamError(f"spec key '{k}' holds a table or nested list")
        canon = [_canon(k, x) for x in vals]
        if len(set(map(json.dumps, canon))) != len(canon):
            raise ParamError(f"spec key '{k}' names a value twice")
        spec[k] = canon
    out = {k: spec.get(k, [DEFAULTS[k]]) for k in AXES}
    out["metrics"] = bool(raw.get("metrics", False))
    return out


def _canon(key: str, v):
    """One value as the table writes it: sizes as text (64M), mTHP sets as
    '16K,64K', counts as int."""
    if key == "mthp" and isinstance(v, list):
        v = ",".join(str(x) for x in v)
    if key in ("small_folios", "aligned_swapin"):
        if not isinstance(v, bool):
            raise ParamError(f"spec key '{key}': {v!r} is not true or false")
        return v
    if isinstance(v, bool):
        raise ParamError(f"spec key '{key}': {v!r} is not a valid value")
    if key in ("iterations", "seed", "cpu", "cpus", "migrate_every"):
        return parse_count(str(v), f"spec key '{key}'")
    if key in ("swap_size", "region_a_size", "region_b_size") and isinstance(v, int):
        return format_size(v)
    if key == "region_offset" and isinstance(v, int):
        return format_size(v) if v else "0"
    return v if v is None else str(v)


def cells(spec: dict) -> list:
    """Every combination of the axes, in grid order: [{axis: value}]."""
    return [dict(zip(AXES, combo)) for combo in itertools.product(*(spec[k] for k in AXES))]


def cell_id(cell: dict, metrics: bool = False) -> str:
    """A cell's name in cells.jsonl and the table: a hash of its parameters
    (and of metrics, when on: a cell run without them is not resumed as one
    with them)."""
    key = dict(cell, metrics=True) if metrics else cell
    return hashlib.sha1(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16]


def _task(cell: dict, metrics: bool, checked: dict | None = None) -> tuple:
    """The checked work of one cell: (id, policy, core kwargs, sizes, metrics).
    checked caches the checks of the cells that differ only in the seed
    (normalize_spec has checked the seed)."""
    key = json.dumps({k: v for k, v in cell.items() if k != "seed"}, sort_keys=True)
    wp = checked.get(key) if checked is not None else None
    if wp is None:
        opts = {k: v for k, v in cell.items() if k not in ("workload", "policy")}
        wp = params_from_options(cell["workload"], cell["policy"], **opts)
        if checked is not None:
            checked[key] = wp
    kw = dict(wp.core_kwargs(), seed=cell["seed"])
    return (cell_id(cell, metrics), cell["policy"], kw, list(wp.mthp_kb), metrics)


# ------------------------------------------------------------------ cells

def run_task(task: tuple) -> tuple:
    """Runs one cell on the model: (id, rows without the cell columns, seconds)."""
    cid, policy, kw, sizes, metrics = task
    raw = _core.run(policy=policy, metrics=metrics, **kw)
    its = raw["iterations"]
    rows = []
    for kb in sizes:
        o = size_to_order(kb)
        # iterations that swapped nothing out at the size (0/0) are no data,
        # not 0 %: left out; a size with no data at all has empty columns
        pct = [100.0 * it["swpout_fallback"][o] / (it["swpout"][o] + it["swpout_fallback"][o])
               for it in its if it["swpout"][o] + it["swpout_fallback"][o]]
        last = [100.0 * it["swpout_fallback"][o] / (it["swpout"][o] + it["swpout_fallback"][o])
                for it in its[-10:] if it["swpout"][o] + it["swpout_fallback"][o]]
        row = {"size_kb": kb,
               "iterations_with_data": len(pct),
               "mean_fallback_pct": round(stats.mean(pct), 6) if pct else None,
               "sd_fallback_pct": round(stats.stdev(pct), 6) if len(pct) > 1 else None,
               "max_fallback_pct": round(max(pct), 6) if pct else None,
               "last10_mean_fallback_pct": round(stats.mean(last), 6) if last else None,
               "swpout": sum(it["swpout"][o] for it in its),
               "swpout_fallback": sum(it["swpout_fallback"][o] for it in its),
               # of those, the fallbacks while the devices had 2^order free
               # slots, and while one had them naturally aligned together
               "swpout_fallback_free": sum(it["fail_free"][o] for it in its),
               "swpout_fallback_aligned": sum(it["fail_aligned"][o] for it in its),
               "order0_alloc_fail": sum(it["alloc_fail0"] for it in its),
               "order0_alloc_fail_free": sum(it["fail_free"][0] for it in its),
               "final_layout_hash": f"{its[-1]['layout_hash']:016x}" if its else None}
        if metrics:
            f = its[-1]["frag"]
            row.update({"final_free_slots": f["free_slots"],
                        "final_unusable_index": f["unusable_index"][o],
                        "final_fragmentation_index": f["fragmentation_index"][o],
                        "final_free_extents": f["free_extents"],
                        "final_bluestore_score": round(f["bluestore_score"], 9),
                        "mean_bluestore_score": round(stats.mean(i["frag"]["bluestore_score"]
                                                                 for i in its), 9)})
        rows.append(row)
    return cid, rows, raw["seconds"]


def run_chunk(tasks: list) -> list:
    return [run_task(t) for t in tasks]


def _chunks(tasks: list, workers: int) -> list:
    size = max(1, min(64, math.ceil(len(tasks) / (workers * 16))))
    return [tasks[i:i + size] for i in range(0, len(tasks), size)]


# ------------------------------------------------------------------ progress

class Progress:
    """cells done / total, rate and ETA on one stderr line (nothing when quiet)."""

    def __init__(self, total: int, resumed: int, quiet: bool, out=sys.stderr):
        self.total, self.done, self.resumed = total, resumed, resumed
        self.quiet, self.out = quiet, out
        self.t0 = time.monotonic()
        self.last = 0.0

    def update(self, n: int, force: bool = False) -> None:
        self.done += n
        now = time.monotonic()
        if self.quiet or (not force and now - self.last < 0.2):
            return
        self.last = now
        ran = self.done - self.resumed
        rate = ran / (now - self.t0) if now > self.t0 else 0.0
        left = self.total - self.done
        eta = f"{int(left / rate) // 60}:{int(left / rate) % 60:02d}" if rate > 0 else "?"
        width = 30
        fill = int(width * self.done / self.total) if self.total else width
        extra = f" ({self.resumed} resumed)" if self.resumed else ""
        self.out.write(f"\rsweep: [{'#' * fill}{'.' * (width - fill)}] {self.done}/{self.total} cells"
                       f"{extra}  {rate:.1f} cells/s  ETA {eta}  ")
        self.out.flush()

    def close(self) -> None:
        if not self.quiet:
            self.update(0, force=True)
            self.out.write("\n")
            self.out.flush()


# ------------------------------------------------------------------ backends

def _run_pool(chunks: list, workers: int, on_result) -> None:
    if workers == 1:
        for ch in chunks:
            for r in run_chunk(ch):
                on_result(r)
        return
    from concurrent.futures import ProcessPoolExecutor, as_completed
    with ProcessPoolExecutor(max_workers=workers, initializer=_worker_init) as ex:
        futs = [ex.submit(run_chunk, ch) for ch in chunks]
        try:
            for fut in as_completed(futs):
                for r in fut.result():
                    on_result(r)
        except BaseException:
            # Ctrl-C: the finished cells are in cells.jsonl; the chunks in
            # flight end, the others never start
            ex.shutdown(wait=True, cancel_futures=True)
            raise


def _worker_init() -> None:
    """Workers leave Ctrl-C to the parent (no traceback from each)."""
    import signal
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _ray_init(address: str | None):
    try:
        import ray
    except ImportError:
        raise ParamError("--ray needs ray, which is not installed (pip install 'swaplab[ray]')") from None
    if not ray.is_initialized():
        ray.init(address=address, include_dashboard=False, log_to_driver=False,
                 configure_logging=False)
    return ray


def _run_ray(chunks: list, address: str | None, on_result) -> int:
    ray = _ray_init(address)
    remote = ray.remote(run_chunk)
    pending = [remote.remote(ch) for ch in chunks]
    while pending:
        done, pending = ray.wait(pending, num_returns=1)
        for ref in done:
            for r in ray.get(ref):
                on_result(r)
    return int(ray.cluster_resources().get("CPU", 1))


# ------------------------------------------------------------------ the sweep

def read_done(path: str) -> dict:
    """cells.jsonl -> {cell id: rows}; a torn last line (an interrupted
    write) is ignored."""
    done = {}
    if not os.path.exists(path):
        return done
    with open(path, encoding="utf-8") as f:
        for line in f:
            try:
                rec = json.loads(line)
                done[rec["cell"]] = rec["rows"]
            except (ValueError, KeyError, TypeError):
                continue
    return done


def _refused_by_policy(cell: dict, spec: dict) -> bool:
    """True when another policy of the spec accepts the cell's options: the
    cell's policy refuses them (a device kind it does not model)."""
    opts = {k: v for k, v in cell.items() if k not in ("workload", "policy")}
    for pol in spec["policy"]:
        if pol == cell["policy"]:
            continue
        try:
            params_from_options(cell["workload"], pol, **opts)
            return True
        except ParamError:
            continue
    return False


def _ends_with_newline(path: str) -> bool:
    with open(path, "rb") as f:
        f.seek(-1, os.SEEK_END)
        return f.read(1) == b"\n"


def run_sweep(spec: dict, out_dir: str, *, jobs: int | None = None, ray_address=None,
              use_ray: bool = False, quiet: bool = False, resume: bool = True) -> dict:
    """Runs every cell of a normalized spec not yet in out_dir; writes the
    table, the aggregate and the metadata. Returns the metadata with
    'rows_data' (the table as dicts) and 'agg_data' (the aggregate)."""
    grid = cells(spec)
    metrics = spec["metrics"]
    checked = {}
    tasks, skipped = [], []
    for c in grid:
        try:
            tasks.append(_task(c, metrics, checked))
        except ParamError as e:
            if not _refused_by_policy(c, spec):
                raise
            skipped.append({"cell": cell_id(c, metrics), "policy": c["policy"], "device": c["device"],
                            "reason": str(e)})
    if not tasks:
        raise ParamError(f"no cell can run: {skipped[0]['reason']}")
    gone = {sk["cell"] for sk in skipped}
    grid = [c for c in grid if cell_id(c, metrics) not in gone]
    os.makedirs(out_dir, exist_ok=True)
    check_writable(os.path.join(out_dir, "table.csv"), "sweep output")
    done_path = os.path.join(out_dir, "cells.jsonl")
    done = read_done(done_path) if resume else {}
    if not resume and os.path.exists(done_path):
        os.unlink(done_path)
    todo = [t for t in tasks if t[0] not in done]
    workers = jobs or os.cpu_count() or 1
    prog = Progress(len(tasks), len(tasks) - len(todo), quiet)
    cell_seconds = []
    if use_ray and todo:
        _ray_init(ray_address)   # its start-up is not the sweep's time
    t0 = time.monotonic()
    with open(done_path, "a", encoding="utf-8") as log:
        if log.tell() and not _ends_with_newline(done_path):
            log.write("\n")   # after a torn line, records start on a line of their own

        def on_result(r):
            cid, rows, secs = r
            done[cid] = rows
            cell_seconds.append(secs)
            log.write(json.dumps({"cell": cid, "rows": rows}) + "\n")
            log.flush()
            prog.update(1)

        try:
            if use_ray:
                workers = _run_ray(_chunks(todo, workers), ray_address, on_result)
            else:
                _run_pool(_chunks(todo, workers), workers, on_result)
        finally:
            prog.close()
    wall = time.monotonic() - t0
    rows = table_rows(grid, done, metrics)
    write_csv(os.path.join(out_dir, "table.csv"), rows, columns(metrics))
    parquet = write_parquet(os.path.join(out_dir, "table.parquet"), rows, columns(metrics))
    agg = aggregate(rows, spec)
    write_csv(os.path.join(out_dir, "agg.csv"), agg, list(agg[0]) if agg else [])
    n = len(todo)
    busy = sum(cell_seconds)
    meta = {"schema": SCHEMA, "swaplab_version": __version__,
            "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            "machine": machine_info(), "versions": versions(), "spec": spec,
            "cells": len(tasks), "cells_run": n, "cells_resumed": len(tasks) - n,
            "rows": len(rows),
            # cells a policy refuses (a device kind it does not model), as history skips them
            "skipped": skipped,
            "backend": "ray" if use_ray else "process-pool", "workers": workers,
            "wall_seconds": round(wall, 6),
            "cells_per_second": round(n / wall, 3) if wall > 0 and n else None,
            # the share of the workers' time spent inside the C runs: 1.0
            # is no overhead (pickling, scheduling, idle workers at the end)
            "busy_fraction": round(busy / (wall * workers), 4) if wall > 0 and n else None,
            "files": ["cells.jsonl", "table.csv", "agg.csv", "sweep.json"]
                     + (["table.parquet"] if parquet else [])}
    write_json(os.path.join(out_dir, "sweep.json"), meta)
    meta["rows_data"] = rows
    meta["agg_data"] = agg
    return meta


def versions() -> dict:
    import platform
    from importlib import metadata
    out = {"swaplab": __version__, "python": platform.python_version()}
    for dist in ("numpy", "pandas", "pyarrow", "scipy", "ray", "matplotlib"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            pass
    return out


def columns(metrics: bool) -> list:
    return ROW_COLUMNS + (FRAG_COLUMNS if metrics else [])


def table_rows(grid: list, done: dict, metrics: bool) -> list:
    rows = []
    for c in grid:
        cid = cell_id(c, metrics)
        for r in done[cid]:
            row = {"cell": cid, **c, **r}
            rows.append({k: row.get(k) for k in columns(metrics)})
    return rows


def write_csv(path: str, rows: list, cols: list) -> None:
    """A table as CSV, through the one safe writer (results.write_output)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(cols)
    for r in rows:
        w.writerow(["" if r.get(k) is None else _csv_value(r.get(k)) for k in cols])
    write_output(path, buf.getvalue(), "sweep table")


def _csv_value(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return repr(v)
    return v


def write_parquet(path: str, rows: list, cols: list) -> bool:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        return False
    buf = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows, schema=None).select(cols) if rows
                   else pa.table({k: [] for k in cols}), buf)
    write_output(path, buf.getvalue(), "sweep table")
    return True


# ------------------------------------------------------------------ aggregation

def aggregate(rows: list, spec: dict, values=("mean_fallback_pct", "last10_mean_fallback_pct")) -> list:
    """The rows over seeds: per configuration (every axis but the seed) and
    size, n, mean and sd of each value; and, against the spec's first policy
    with everything else equal, B - A and Welch's p (stats.compare_groups)."""
    key_cols = [k for k in AXES if k != "seed"] + ["size_kb"]
    groups = {}
    for r in rows:
        groups.setdefault(tuple(r[k] for k in key_cols), []).append(r)
    ref_policy = spec["policy"][0]
    pi = key_cols.index("policy")
    out = []
    for key, members in groups.items():
        row = dict(zip(key_cols, key))
        row["seeds"] = len(members)
        ref_key = key[:pi] + (ref_policy,) + key[pi + 1:]
        ref = groups.get(ref_key)
        for v in values:
            xs = [m[v] for m in members if m[v] is not None]   # seeds with data
            row[f"{v}_seeds"] = len(xs)
            row[f"{v}_mean"] = round(stats.mean(xs), 6) if xs else None
            sd = stats.stdev(xs)
            row[f"{v}_sd"] = None if math.isnan(sd) else round(sd, 6)
            if ref is not None and row["policy"] != ref_policy and xs:
                c = stats.compare_groups([m[v] for m in ref if m[v] is not None], xs)
                row[f"{v}_diff_vs_ref"] = None if c["diff"] is None else round(c["diff"], 6)
                row[f"{v}_p_vs_ref"] = c["p"]
                row[f"{v}_significant"] = c["significant"]
            else:
                row[f"{v}_diff_vs_ref"] = row[f"{v}_p_vs_ref"] = row[f"{v}_significant"] = None
        row["reference_policy"] = ref_policy
        out.append(row)
    return out


# ------------------------------------------------------------------ command line

def parse_seeds(values) -> list:
    """'1,2,5-8' (repeatable) -> [1, 2, 5, 6, 7, 8]."""
    out = []
    for item in split_list(values, "--seed"):
        if "-" in item.strip("-") and not item.startswith("-"):
            lo, hi = item.split("-", 1)
            a, b = parse_count(lo, "--seed"), parse_count(hi, "--seed")
            if b < a:
                raise ParamError(f"--seed range {item} is empty")
            if b - a >= 1000000:
                raise ParamError(f"--seed range {item} is over a million seeds")
            out += list(range(a, b + 1))
        else:
            out.append(parse_count(item, "--seed"))
    return out


def spec_from_args(a) -> dict:
    raw = load_toml(a.spec) if a.spec else {}
    cli = {}
    if a.workload:
        cli["workload"] = split_list(a.workload, "--workload")
    if a.policy:
        cli["policy"] = split_list(a.policy, "--policy")
    if a.device:
        cli["device"] = split_list(a.device, "--device")
    if a.swap_size:
        cli["swap_size"] = split_list(a.swap_size, "--swap-size")
    if a.mthp:
        cli["mthp"] = list(a.mthp)
    if a.region_offset:
        cli["region_offset"] = list(a.region_offset)
    if a.seed:
        cli["seed"] = parse_seeds(a.seed)
    if a.iterations:
        cli["iterations"] = [parse_count(x, "--iterations", 1) for x in split_list(a.iterations, "--iterations")]
    if a.small_folios:
        cli["small_folios"] = [True]
    if a.aligned_swapin:
        cli["aligned_swapin"] = [True]
    if a.rng:
        cli["rng"] = split_list(a.rng, "--rng")
    if a.metrics:
        cli["metrics"] = True
    raw.update(cli)
    return normalize_spec(raw)


def add_parsers(sub) -> None:
    s = sub.add_parser("sweep", help="a grid of model runs: one table, resumable, parallel",
                       description="Runs every combination of the given workload options on the "
                                   "model (a local process pool over all cores, or Ray) and writes "
                                   "one table: a row per cell and mTHP size (docs/sweep.md). "
                                   "Options given here replace the spec's key of the same name.")
    s.add_argument("spec", nargs="?", metavar="SPEC.toml", help="the grid as TOML (docs/sweep.md)")
    s.add_argument("-o", "--out", required=True, metavar="DIR",
                   help="output directory; a re-run with the same DIR skips finished cells")
    s.add_argument("--workload", action="append", metavar="A[,B]", help="workloads (repeatable or comma list)")
    s.add_argument("--policy", action="append", metavar="A[,B]", help="policies (repeatable or comma list)")
    s.add_argument("--device", action="append", metavar="A[,B]", help="device kinds (repeatable or comma list)")
    s.add_argument("--swap-size", action="append", metavar="S[,S]", help="swap sizes (repeatable or comma list)")
    s.add_argument("--mthp", action="append", metavar="SET",
                   help="one mTHP set per use, e.g. --mthp 64K --mthp 16K,64K")
    s.add_argument("--region-offset", action="append", metavar="A[,B]|aslr",
                   help="region offsets, one per option: 0, 1472K, 1M,64K or aslr (repeatable)")
    s.add_argument("--seed", action="append", metavar="N[,N|A-B]", help="seeds: 1,2,3 or 1-10 (repeatable)")
    s.add_argument("--iterations", action="append", metavar="N[,N]", help="iterations per run (repeatable or comma list)")
    s.add_argument("-s", "--small-folios", action="store_true", help="every cell with -s")
    s.add_argument("-a", "--aligned-swapin", action="store_true", help="every cell with -a")
    s.add_argument("--rng", action="append", metavar="R[,R]", help="default and/or glibc")
    s.add_argument("--metrics", action="store_true", help="fragmentation metrics columns (docs/metrics.md)")
    s.add_argument("-j", "--jobs", default=None, help="worker processes (default: every core)")
    s.add_argument("--ray", nargs="?", const="", default=None, metavar="ADDRESS",
                   help="run on Ray: a cluster's ADDRESS, or a local Ray without one")
    s.add_argument("--fresh", action="store_true", help="forget finished cells in DIR and run all")
    s.add_argument("-q", "--quiet", action="store_true", help="no progress bar, no summary")
    s.set_defaults(func=main)


def main(a) -> int:
    spec = spec_from_args(a)
    jobs = parse_count(a.jobs, "--jobs", 1, 4096) if a.jobs is not None else None
    if a.ray is not None and jobs is not None:
        raise ParamError("--jobs and --ray do not go together (Ray uses its cluster's CPUs)")
    if os.path.exists(a.out) and not os.path.isdir(a.out):
        raise ParamError(f"--out '{a.out}' is not a directory")
    meta = run_sweep(spec, a.out, jobs=jobs, use_ray=a.ray is not None, ray_address=a.ray or None,
                     quiet=a.quiet, resume=not a.fresh)
    if not a.quiet:
        for sk in meta["skipped"]:
            print(f"sweep: skipped {sk['policy']} on {sk['device']}: {sk['reason']}", file=sys.stderr)
        rate = meta["cells_per_second"]
        print(f"sweep: {meta['cells']} cells ({meta['cells_resumed']} resumed), {meta['rows']} rows "
              f"in {a.out}/table.csv; {meta['wall_seconds']:.1f} s"
              + (f", {rate:.1f} cells/s on {meta['workers']} workers" if rate else ""))
    return 0


# ------------------------------------------------------------------ bench

def bench(cells_n: int = 200, iterations: int = 100, workers: int | None = None) -> dict:
    """cells/s of one sweep on 1 worker and on `workers` (default: every
    core), and the parallel efficiency (rate_N / rate_1) / N."""
    import tempfile
    workers = workers or os.cpu_count() or 1
    spec = normalize_spec({"seed": list(range(1, cells_n + 1)), "iterations": iterations})
    out = {"schema": "swaplab.bench/1", "bench": "sweep", "swaplab_version": __version__,
           "machine": machine_info(), "cells": cells_n, "iterations": iterations, "results": []}
    for w in sorted({1, workers}):
        with tempfile.TemporaryDirectory() as d:
            m = run_sweep(spec, d, jobs=w, quiet=True)
        out["results"].append({"workers": w, "wall_seconds": m["wall_seconds"],
                               "cells_per_second": m["cells_per_second"],
                               "busy_fraction": m["busy_fraction"]})
    r1 = out["results"][0]["cells_per_second"]
    rn = out["results"][-1]["cells_per_second"]
    out["speedup"] = round(rn / r1, 3)
    out["parallel_efficiency"] = round(rn / r1 / workers, 3)
    return out
