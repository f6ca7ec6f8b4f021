"""Calibration of the cost model on the live kernel (docs/cost-calibration.md).

    python -m swaplab.kernel.calibrate [--reps 3] [--size 96M] --json PATH

Runs one pinned usemem process (the reclaim harness, so its own zram device,
memory cgroup and knobs, all restored) in controlled settings: N faults only
(no limit pressure), swap-out of the part above a limit, and swap-in by a
re-read pass, each with 4K pages only and with one mTHP size of 16K, 64K,
512K and 2M. Each run gives the workload's system time (wait4) and its
event counts; a non-negative least-squares fit gives the system time per
event. Writes swaplab.cost-calibration/1 JSON.
"""
from __future__ import annotations

import argparse
import sys

from ..params import ParamError, parse_count, parse_size
from ..results import write_json
from . import machine as M
from . import reclaim as R

# The cost model's events (h3's sl_cost_model in core/include/swaplab/reclaim.h,
# plus fault_pmd, and run: a constant per process)
FEATURES = ("fault_folio", "fault_page", "fault_pmd", "swpout_folio", "swpout_page", "swpin_folio",
            "swpin_page", "split", "scan_page", "run", "op", "lock")
SETTINGS = ([], [16], [64], [512], [2048])
# The multi-process experiments (--multi; kernel-findings F14): usemem of
# 12M per process, limit half the demand, one re-read, as (mthp, procs,
# cpus, chunk): concurrency on one and two CPUs, and the driver's cost per
# operation (chunk 4 and 1: 16 and 64 times the operations of chunk 64)
MULTI = (("none", 1, 1, 64), ("none", 2, 2, 64), ("none", 4, 1, 64), ("none", 4, 2, 64),
         ("64K", 1, 1, 64), ("64K", 2, 2, 64), ("64K", 4, 1, 64), ("64K", 4, 2, 64),
         ("none", 1, 1, 4), ("none", 2, 2, 4), ("none", 1, 1, 1), ("none", 2, 2, 1))


def raw_counts(res: dict) -> dict:
    """What the fit needs of one run, kept in the calibration file so that
    it can be refitted: the workload's own faults (wait4) and the counters."""
    c = res["counters"]
    procs = res["time"]["per_process"]
    keep = ("anon_fault_alloc", "swpout", "swpout_fallback", "swpin", "split")
    return {"minflt": sum(p["minflt"] for p in procs), "majflt": sum(p["majflt"] for p in procs),
            "processes": len(procs),
            "sizes": {kb: {k: d.get(k, 0) for k in keep} for kb, d in c["sizes"].items()},
            "order0": c["order0"], "pswpout": c["vmstat"]["pswpout"], "pswpin": c["vmstat"]["pswpin"],
            "pgscan_anon": c["vmstat"].get("pgscan_anon", 0), "pgrefill": c["vmstat"].get("pgrefill", 0)}


def features(raw: dict) -> dict:
    """The event counts of one run. New-page faults are the workload's minor
    faults (wait4; swap-ins from zram are its major faults) less the large
    folios it faulted in; the large folios per size come from
    anon_fault_alloc, which is system-wide while the knobs are set (F8:
    other processes add a few). PMD-size (2M) faults are their own feature:
    they cost milliseconds each here (F9)."""
    sizes = raw["sizes"]
    mthp = {kb: d for kb, d in sizes.items() if int(kb) < 2048}
    large = sum(d["anon_fault_alloc"] for d in mthp.values())
    pmd = sizes.get("2048", {}).get("anon_fault_alloc", 0)
    order0 = max(raw["minflt"] - large - pmd, 0)
    return {"fault_folio": order0 + large,
            "fault_page": order0 + sum(d["anon_fault_alloc"] * int(kb) // 4 for kb, d in mthp.items()),
            "fault_pmd": pmd,
            "swpout_folio": sum(d["swpout"] for d in sizes.values()) + raw["order0"]["swpout"],
            "swpout_page": raw["pswpout"],
            "swpin_folio": sum(d["swpin"] for d in sizes.values()) + raw["order0"]["swpin"],
            "swpin_page": raw["pswpin"],
            "split": sum(d["swpout_fallback"] for d in sizes.values()),
            "scan_page": raw["pgscan_anon"] + raw["pgrefill"],
            "run": raw["processes"],
            # the stream's operations, and the contended share of the events
            # (both as the model counts them for the same stream)
            "op": raw["stream"]["ops"],
            "lock": (sum(d["swpout"] + d["swpin"] for d in sizes.values())
                     + raw["order0"]["swpout"] + raw["order0"]["swpin"]) * raw["stream"]["contended"]}


def stream_counts(argv: list) -> dict:
    """What the model counts for the stream of argv (the same generator the
    kernel driver replays): its operations, and the share of its swap-outs
    and swap-ins (folios) that happen while another CPU runs a live process
    (sl_rrun_result.lock_waits)."""
    from .. import reclaim as model
    prm, _ = model.params_from_args(model.build_parser().parse_args(argv))
    return R.stream_counts(prm)


def experiments(size: int) -> list:
    """(label, options) of every controlled run."""
    out = []
    for sizes in SETTINGS:
        mthp = ",".join(M.size_label(kb) for kb in sizes) or "4K"
        out.append((f"faults {mthp}", dict(mthp=mthp, limit=size * 2, reread=0)))
        out.append((f"swapout {mthp}", dict(mthp=mthp, limit=size // 4, reread=0)))
        out.append((f"swapin {mthp}", dict(mthp=mthp, limit=size // 4, reread=1)))
    return out


def one_argv(size: int, o: dict) -> list:
    return ["usemem", "--procs", "1", "--cpus", "1", "--size", f"{size // 1024}K",
            "--limit", f"{o['limit'] // 1024}K", "--reread", str(o["reread"]),
            "--swap-size", f"{2 * size // (1 << 20) + 16}M", "--mthp", o["mthp"], "-q"]


def multi_argv(mthp: str, procs: int, cpus: int, chunk: int, seed: int) -> list:
    return ["usemem", "--procs", str(procs), "--cpus", str(cpus), "--size", "12M",
            "--limit", f"{6 * procs}M", "--reread", "1", "--swap-size", "256M", "--mthp", mthp,
            "--chunk", str(chunk), "--seed", str(seed), "-q"]


def run_argv(argv: list) -> dict:
    a = R.build_parser().parse_args(argv)
    res, _ = R.run_kernel(R.params_from_args(a, argv))
    return res


def run_one(size: int, o: dict) -> dict:
    return run_argv(one_argv(size, o))


def medians(rows: list, time_of=None) -> list:
    """One row per experiment: the system time of its repetitions taken by
    time_of (default: the minimum: this 2-core VM is shared, contention only
    adds time and single runs vary by up to 2x; the median is kept too) with
    its median features."""
    import statistics
    time_of = time_of or min
    out = []
    for label in dict.fromkeys(r["label"] for r in rows):
        rs = [r for r in rows if r["label"] == label]
        out.append({"label": label, "sys_seconds": time_of([r["sys_seconds"] for r in rs]),
                    "features": {f: statistics.median(r["features"][f] for r in rs) for f in FEATURES}})
    return out


def fit(rows: list) -> tuple[dict, list]:
    """Non-negative least squares of the system time on the event counts."""
    import numpy as np
    from scipy.optimize import nnls

    X = np.array([[r["features"][f] for f in FEATURES] for r in rows], dtype=float)
    y = np.array([r["sys_seconds"] for r in rows])
    scale = X.max(axis=0)
    scale[scale == 0] = 1
    coef, _ = nnls(X / scale, y)
    coef = coef / scale
    pred = X @ coef
    return {f: float(c) for f, c in zip(FEATURES, coef)}, [float(v) for v in pred]


def calibration(rows: list, size: int, reps: int, kernel: str, machine: dict) -> dict:
    """The swaplab.cost-calibration/1 object of the runs: coefficients from
    the per-experiment minimum system time, and from the median."""
    import statistics
    med = medians(rows)
    coef, pred = fit(med)
    for r, p in zip(med, pred):
        r["predicted_sys_seconds"] = round(p, 6)
    errs = [abs(p - r["sys_seconds"]) / r["sys_seconds"] for r, p in zip(med, pred) if r["sys_seconds"] > 0]
    med2 = medians(rows, statistics.median)
    coef2, pred2 = fit(med2)
    errs2 = [abs(p - r["sys_seconds"]) / r["sys_seconds"] for r, p in zip(med2, pred2) if r["sys_seconds"] > 0]
    model = {"name": f"calibrated-{kernel}"}
    model.update({f: round(coef[f] * 1e9, 3) for f in FEATURES if f not in ("fault_pmd", "run", "lock")})
    model["fault_pmd_folio"] = round(coef["fault_pmd"] * 1e9, 3)
    model["lock_wait"] = round(coef["lock"] * 1e9, 3)
    model["op"] = round(coef["op"] * 1e9, 3)
    model["proc"] = round(coef["run"] * 1e9, 3)
    return {"schema": "swaplab.cost-calibration/1", "kernel": kernel, "machine": machine,
            "size_bytes": size, "reps": reps, "unit": "seconds of system time per event",
            "coefficients": coef,
            # the same in nanoseconds under sl_cost_model's field names; a
            # PMD-size fault (fault_pmd_folio) replaces fault_folio and
            # fault_page for that folio; lock_wait per contended event, op
            # per operation, proc per process (the fit's "run")
            "sl_cost_model": model,
            "fit": {"experiments": len(med), "runs": len(rows), "time_of_experiment": "min",
                    "mean_abs_rel_error": round(sum(errs) / len(errs), 4),
                    "max_abs_rel_error": round(max(errs), 4)},
            "coefficients_median": coef2,
            "fit_median": {"time_of_experiment": "median",
                           "mean_abs_rel_error": round(sum(errs2) / len(errs2), 4),
                           "max_abs_rel_error": round(max(errs2), 4)},
            "experiments": med, "runs": rows}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m swaplab.kernel.calibrate")
    ap.add_argument("--reps", default="3")
    ap.add_argument("--size", default="96M")
    ap.add_argument("--refit", metavar="FILE",
                    help="no runs: fit again the runs of an earlier calibration file")
    ap.add_argument("--multi", action="store_true",
                    help="run the multi-process experiments (with --refit: added to its runs)")
    ap.add_argument("--json", required=True)
    a = ap.parse_args(argv)
    import platform
    if a.refit:
        from ..results import load_json_file
        try:
            old = load_json_file(a.refit, "--refit")
            reps = parse_count(a.reps, "--reps", 1, 100)
        except ParamError as e:
            sys.stderr.write(f"calibrate: error: {e}\n")
            return 2
        shapes = {label: stream_counts(one_argv(old["size_bytes"], o))
                  for label, o in experiments(old["size_bytes"])}
        for r in old["runs"]:
            r["raw"].setdefault("stream", shapes.get(r["label"]))
            r["features"] = features(r["raw"])
        rows = old["runs"]
        if a.multi:
            try:
                rows = rows + multi_rows(reps)
            except (M.HarnessError, R.Signalled) as e:
                sys.stderr.write(f"calibrate: error: {e}\n")
                return 1
        write_json(a.json, calibration(rows, old["size_bytes"], old["reps"], old["kernel"],
                                       old["machine"]))
        return 0
    try:
        reps = parse_count(a.reps, "--reps", 1, 100)
        size = parse_size(a.size, "--size")
        rows = []
        for rep in range(reps):
            for label, o in experiments(size):
                res = run_one(size, o)
                raw = raw_counts(res)
                raw["stream"] = stream_counts(one_argv(size, o))
                rows.append({"label": label, "rep": rep, "sys_seconds": res["time"]["sys_seconds"],
                             "user_seconds": res["time"]["user_seconds"], "raw": raw,
                             "features": features(raw)})
                print(f"{label:>16} rep {rep}: sys {rows[-1]['sys_seconds']:.3f}s {rows[-1]['features']}",
                      file=sys.stderr)
        if a.multi:
            rows += multi_rows(reps)
    except ParamError as e:
        sys.stderr.write(f"calibrate: error: {e}\n")
        return 2
    except (M.HarnessError, R.Signalled) as e:
        sys.stderr.write(f"calibrate: error: {e}\n")
        return 1
    write_json(a.json, calibration(rows, size, reps, platform.uname().release, R.machine_info()))
    return 0


def multi_rows(reps: int) -> list:
    """The runs of the multi-process experiments (MULTI), seeds 1..reps."""
    rows = []
    for mthp, procs, cpus, chunk in MULTI:
        label = f"multi {mthp} {procs}p {cpus}cpu chunk {chunk}"
        shape = stream_counts(multi_argv(mthp, procs, cpus, chunk, 1))
        for rep in range(reps):
            res = run_argv(multi_argv(mthp, procs, cpus, chunk, rep + 1))
            raw = raw_counts(res)
            raw["stream"] = shape
            rows.append({"label": label, "rep": rep, "sys_seconds": res["time"]["sys_seconds"],
                         "user_seconds": res["time"]["user_seconds"], "raw": raw, "features": features(raw)})
            print(f"{label:>32} rep {rep}: sys {rows[-1]['sys_seconds']:.3f}s", file=sys.stderr)
    return rows


if __name__ == "__main__":
    sys.exit(main())
