"""Calibration of the cost model on the live kernel (docs/cost-calibration.md).

    python -m swaplab.kernel.calibrate [--reps 3] [--size 96M] --json PATH
    python -m swaplab.kernel.calibrate --stored docs/data/cost-calibration-6.18-f31.json --json PATH  # no kernel
        [--train FILE[+FILE...][:SEEDS] ...] [--heldout FILE[+FILE...][:SEEDS] ...]

Runs one pinned usemem process (the reclaim harness, so its own zram device,
memory cgroup and knobs, all restored) in controlled settings: N faults only
(no limit pressure), swap-out of the part above a limit, and swap-in by a
re-read pass, each with 4K pages only and with one mTHP size of 16K, 64K,
512K and 2M. Each run gives the workload's system time (wait4) and its
event counts; a non-negative least-squares fit gives the system time per
event. Writes swaplab.cost-calibration/1 JSON.

`--stored FILE` runs nothing on the kernel: it fits the stored kernel runs
of FILE together with the stored agreement runs beside it (TRAIN: the
kernel's measured system time against the model's own counts of the same
stream) and reports the fit on held-out stored runs (HELDOUT);
docs/cost-calibration.md, "The fit on stored runs". `--train` and
`--heldout` name other agreement files; `A+B+C` are repetitions of one
experiment, of which each setting and seed's quietest run counts
(kernel-findings F25). Without them the file's own `method` lists them.
"""
from __future__ import annotations

import argparse
import sys

from ..params import ParamError, parse_count, parse_size
from ..results import write_json
from . import agree as A
from . import machine as M
from . import reclaim as R

# The cost model's events (h3's sl_cost_model in core/include/swaplab/reclaim.h,
# plus fault_pmd, and run: a constant per process), and pmd_fresh: a PMD-size
# fault into memory the run has not used before, which only the calibration's
# faults-only experiments have (kernel-findings F22; not a term of the model)
FEATURES = ("fault_folio", "fault_page", "fault_pmd", "swpout_folio", "swpout_page", "swpin_folio",
            "swpin_page", "split", "scan_page", "run", "op", "lock", "pmd_fresh")
# The stored agreement runs of the fit on stored runs (--stored), as (file
# beside the calibration file, seeds): trained on, and held out
TRAIN = (("reclaim-agreement-6.18-f19.json", (1, 2, 3)),)
HELDOUT = (("reclaim-agreement-6.18-f19.json", (4, 5)), ("reclaim-agreement-6.18-f19b.json", None),
           ("reclaim-agreement-6.18-f16b.json", None), ("reclaim-agreement-6.18-f16.json", None),
           ("reclaim-agreement-6.18-f14.json", None))
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


def own_pmd_faults(raw: dict, region_pages: int) -> int:
    """The PMD-size faults of the workload itself, for a run whose only
    large size is 2M and that writes region_pages: each such fault is one
    minor fault for 512 pages, so minflt = region_pages - 511 x PMD faults
    (plus the driver's few own faults, well under 511). The 2048kB
    anon_fault_alloc counter is system-wide (F8) and counted other
    processes' THP faults too (50-64 in a run of 48 PMD-size pages)."""
    return max(0, round((region_pages - raw["minflt"]) / 511))


def features(raw: dict, fresh: bool = False, region_pages: int | None = None) -> dict:
    """The event counts of one run. New-page faults are the workload's minor
    faults (wait4; swap-ins from zram are its major faults) less the large
    folios it faulted in; the large folios per size come from
    anon_fault_alloc, which is system-wide while the knobs are set (F8:
    other processes add a few). PMD-size (2M) faults are their own feature;
    given region_pages (a run of 2M as its only large size) they are the
    workload's own (own_pmd_faults). fresh: the run took every PMD-size
    block new (a faults-only experiment, no limit to recycle them): its PMD
    faults are `pmd_fresh`, which cost milliseconds each on this VM (F9,
    F22), not `fault_pmd`."""
    sizes = raw["sizes"]
    mthp = {kb: d for kb, d in sizes.items() if int(kb) < 2048}
    large = sum(d["anon_fault_alloc"] for d in mthp.values())
    pmd = sizes.get("2048", {}).get("anon_fault_alloc", 0)
    if pmd and region_pages is not None and not large:
        pmd = min(pmd, own_pmd_faults(raw, region_pages))
    order0 = max(raw["minflt"] - large - pmd, 0)
    return {"fault_folio": order0 + large,
            "fault_page": order0 + sum(d["anon_fault_alloc"] * int(kb) // 4 for kb, d in mthp.items()),
            "fault_pmd": 0 if fresh else pmd,
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
                     + raw["order0"]["swpout"] + raw["order0"]["swpin"]) * raw["stream"]["contended"],
            "pmd_fresh": pmd if fresh else 0}


def run_features(run: dict, size: int) -> dict:
    """features() of a stored calibration run: the single-process
    experiments write `size` bytes (their PMD faults are the workload's
    own); the faults-only ones take every PMD-size block new (fresh)."""
    single = not run["label"].startswith("multi")
    return features(run["raw"], fresh=run["label"].startswith("faults "),
                    region_pages=size // 4096 if single else None)


def model_features(res: dict, serial: bool = False) -> dict:
    """The model's own counts of one run (a swaplab.reclaim-result/1) as the
    fit's features: exactly the terms of its sl_cost_predict, so that the
    fitted coefficients give the model's predicted_sys_seconds. serial: the
    kernel ran the stream one operation at a time (--window 1), nothing was
    contended."""
    s = res["sizes"]
    pmd = s.get("2048", {}).get("faults", 0)
    r = res["reclaim"]
    return {"fault_folio": sum(d["faults"] for kb, d in s.items() if kb != "2048"),
            "fault_page": res["pages"]["faulted"] - 512 * pmd, "fault_pmd": pmd,
            "swpout_folio": sum(d["swpout"] for d in s.values()), "swpout_page": res["pages"]["swapped_out"],
            "swpin_folio": sum(d["swpin"] for d in s.values()), "swpin_page": res["pages"]["swapped_in"],
            "split": sum(d["swpout_fallback"] for d in s.values()),
            "scan_page": r["pgscan"] + r["pgrefill"], "run": res["processes"], "op": res["cost"]["ops"],
            "lock": 0 if serial else res["cost"]["lock_waits"], "pmd_fresh": 0}


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


def medians(rows: list, time_of=None, key: str = "sys_seconds") -> list:
    """One row per experiment: the system time of its repetitions taken by
    time_of (default: the minimum: this 2-core VM is shared, contention only
    adds time and single runs vary by up to 2x; the median is kept too) with
    its median features. key: the measured time (sys_seconds, or
    cpu_seconds: user + system, kernel-findings F34)."""
    import statistics
    time_of = time_of or min
    out = []
    for label in dict.fromkeys(r["label"] for r in rows):
        rs = [r for r in rows if r["label"] == label]
        out.append({"label": label, key: time_of([r[key] for r in rs]),
                    "features": {f: statistics.median(r["features"][f] for r in rs) for f in FEATURES}})
    return out


def fit(rows: list, relative: bool = False, key: str = "sys_seconds") -> tuple[dict, list]:
    """Non-negative least squares of the system time on the event counts;
    relative: each run weighted by 1 / its system time (the relative errors
    are minimised, so that a 0.04 s run counts as much as a 1 s one)."""
    import numpy as np
    from scipy.optimize import nnls

    X = np.array([[r["features"][f] for f in FEATURES] for r in rows], dtype=float)
    y = np.array([r[key] for r in rows])
    w = 1 / np.maximum(y, 1e-3) if relative else np.ones_like(y)
    X0 = X
    X, y = X * w[:, None], y * w
    scale = X.max(axis=0)
    scale[scale == 0] = 1
    coef, _ = nnls(X / scale, y)
    coef = coef / scale
    pred = X0 @ coef
    return {f: float(c) for f, c in zip(FEATURES, coef)}, [float(v) for v in pred]


# the fit's features under sl_cost_model's field names (pmd_fresh is none of the model's)
MODEL_FIELD = {"fault_pmd": "fault_pmd_folio", "run": "proc", "lock": "lock_wait", "pmd_fresh": None}


def cost_model_of(coef: dict, name: str) -> dict:
    """The coefficients (seconds per event) as sl_cost_model: nanoseconds
    under the model's field names."""
    model = {"name": name}
    model.update({MODEL_FIELD.get(f, f): round(coef[f] * 1e9, 3) for f in FEATURES
                  if MODEL_FIELD.get(f, f) is not None})
    return model


def predict_ns_model(model: dict, feat: dict) -> float:
    """Seconds predicted by an sl_cost_model (ns) for the fit's features of
    a model run: the model's own sl_cost_predict."""
    return sum(model[MODEL_FIELD.get(f, f)] * feat[f] for f in FEATURES
               if MODEL_FIELD.get(f, f) is not None) * 1e-9


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
    model = cost_model_of(coef, f"calibrated-{kernel}")
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


def agreement_rows(path, seeds, runs_cache: dict, measured: str = "sys") -> list:
    """The runs of a stored agreement file (seeds: the seeds kept, None:
    all) as rows of the fit: the kernel's measured system time against the
    model's own counts of the same setting and seed (agree.model_run; the
    model's counts do not depend on the cost). `path` may be a list of
    files that repeat one experiment: each setting and seed's run with the
    least measured time stands for them (agree.quietest). measured "cpu"
    adds each row's cpu_seconds, user + system time (kernel-findings F34)."""
    from ..results import load_json_file
    paths = [path] if isinstance(path, str) else list(path)
    stored = [load_json_file(p, "agreement file") for p in paths]
    for st, p in zip(stored, paths):
        if not isinstance(st, dict) or st.get("schema") != "swaplab.reclaim-agreement/1":
            raise ParamError(f"agreement file '{p}' is not a swaplab.reclaim-agreement/1 file")
    stored = stored[0] if len(stored) == 1 else A.quietest(stored, paths, measured=measured)
    serial = stored.get("window") == 1
    out = []
    for row in stored["rows"]:
        if not row.get("runs"):
            continue
        w, size, mlabel = row["workload"], row["size"], row["mthp"]
        for seed, run in zip(A.stored_seeds(row), row["runs"]):
            if seeds is not None and seed not in seeds:
                continue
            key = (w, size, mlabel, seed)
            if key not in runs_cache:
                runs_cache[key] = A.model_run(w, dict(A.SIZES[w])[size], dict(A.MTHP)[mlabel], seed, None)
            out.append({"label": f"{w} {size} {mlabel}", "seed": seed, "sys_seconds": run["kernel"]["sys"],
                        "features": model_features(runs_cache[key], serial)})
            if measured == "cpu":
                out[-1]["cpu_seconds"] = A.measured_seconds(A.stored_time(run["kernel"]), "cpu",
                                                            f"agreement file {paths[0]}")
    return out


def settings_table(rows: list, model: dict, key: str = "sys_seconds") -> dict:
    """Per setting, in order: the mean over its seeds of the prediction by
    `model` (sl_cost_model, ns) and of the measured system time, and whether
    they agree within the issue's 15 %."""
    import statistics
    out = []
    for label in dict.fromkeys(r["label"] for r in rows):
        rs = [r for r in rows if r["label"] == label]
        p = statistics.mean(predict_ns_model(model, r["features"]) for r in rs)
        m = statistics.mean(r[key] for r in rs)
        rel = (p - m) / m if m else None
        out.append({"setting": label, "seeds": [r["seed"] for r in rs], "predicted_sys_seconds": round(p, 6),
                    f"measured_{key}": round(m, 6), "rel": None if rel is None else round(rel, 4),
                    "within_15pct": rel is not None and abs(rel) <= 0.15})
    return {"within_15pct": sum(r["within_15pct"] for r in out), "settings": len(out), "rows": out}


def spec_json(files) -> list:
    """TRAIN/HELDOUT-style (file or files, seeds) pairs as the calibration
    file's `method` records them."""
    return [{"file": n if isinstance(n, str) else list(n), "seeds": list(s) if s else "all"} for n, s in files]


def spec_of_json(items, what: str) -> tuple:
    """The inverse of spec_json(): a calibration file's own train or
    heldout list."""
    try:
        return tuple((i["file"] if isinstance(i["file"], str) else tuple(i["file"]),
                      None if i["seeds"] == "all" else tuple(i["seeds"])) for i in items)
    except (KeyError, TypeError):
        raise ParamError(f"the calibration file's method.{what} is not a list of {{file, seeds}}") from None


def parse_spec(text: str, what: str) -> tuple:
    """--train / --heldout: FILE[+FILE...][:SEED,SEED...], the files beside
    the calibration file; several files are repetitions of one experiment."""
    files, _, seeds = text.partition(":")
    names = files.split("+")
    if not all(names):
        raise ParamError(f"{what} '{text}': a file name is empty")
    try:
        sd = tuple(int(x) for x in seeds.split(",")) if seeds else None
    except ValueError:
        raise ParamError(f"{what} '{text}': seeds must be a comma list of integers") from None
    return (names[0] if len(names) == 1 else tuple(names), sd)


def stored_calibration(cal: dict, base: str, train=TRAIN, heldout=HELDOUT, measured: str = "sys") -> dict:
    """The fit on stored runs (--stored): the calibration file's kernel runs
    (each experiment's minimum, as calibration()) and the TRAIN agreement
    runs (the model's counts), fitted together by non-negative least squares
    of the relative errors; the agreement files' settings predicted with the
    result, TRAIN and HELDOUT apart. measured: the kernel's time fitted,
    "sys" (system time) or "cpu" (user + system time, kernel-findings F34).
    Deterministic: no random draw, the same files give the same
    coefficients."""
    import os
    import platform

    import numpy
    import scipy

    from .. import __version__
    runs = cal["runs"]
    key = "cpu_seconds" if measured == "cpu" else "sys_seconds"
    for r in runs:
        r["features"] = run_features(r, cal["size_bytes"])
    rows = [dict(r, cpu_seconds=r["sys_seconds"] + r["user_seconds"]) for r in runs] if measured == "cpu" else runs
    med = medians(rows, key=key)
    cache: dict = {}
    def where(name):
        return os.path.join(base, name) if isinstance(name, str) else [os.path.join(base, n) for n in name]

    train_rows = [r for name, seeds in train for r in agreement_rows(where(name), seeds, cache, measured)]
    coef, _ = fit(med + train_rows, relative=True, key=key)
    model = cost_model_of(coef, f"calibrated-{cal['kernel']}-stored")
    for r in med:
        r["predicted_sys_seconds"] = round(sum(coef[f] * r["features"][f] for f in FEATURES), 6)
    errs = [abs(r["predicted_sys_seconds"] - r[key]) / r[key] for r in med]
    tables = []
    for role, files in (("train", train), ("heldout", heldout)):
        for name, seeds in files:
            t = settings_table(agreement_rows(where(name), seeds, cache, measured), model, key)
            tables.append({"file": name if isinstance(name, str) else list(name),
                           "seeds": list(seeds) if seeds else "all", "role": role, **t})
    method = {"fit": "non-negative least squares of relative errors (scipy nnls, columns scaled)",
              "experiments": "the kernel runs below, each experiment's minimum system time",
              "train": spec_json(train), "heldout": spec_json(heldout),
              "features_of_agreement_runs": "the model's own counts of the same setting and seed"}
    if measured == "cpu":
        method["experiments"] = "the kernel runs below, each experiment's minimum user + system time"
        method["measured"] = "cpu"
    return {"schema": "swaplab.cost-calibration/1", "kernel": cal["kernel"], "machine": cal["machine"],
            "size_bytes": cal["size_bytes"], "reps": cal["reps"],
            "unit": "seconds of user + system time per event" if measured == "cpu" else
                    "seconds of system time per event",
            "method": method,
            "versions": {"swaplab": __version__, "python": platform.python_version(),
                         "numpy": numpy.__version__, "scipy": scipy.__version__},
            "coefficients": coef,
            # sl_cost_model: nanoseconds under the model's field names; a
            # PMD-size fault (fault_pmd_folio) replaces fault_folio and
            # fault_page for that folio; pmd_fresh is no term of the model
            "sl_cost_model": model,
            "fit": {"experiments": len(med), "runs": len(runs), "agreement_runs": len(train_rows),
                    "time_of_experiment": "min",
                    "experiments_mean_abs_rel_error": round(sum(errs) / len(errs), 4),
                    "experiments_max_abs_rel_error": round(max(errs), 4)},
            "agreement": tables,
            "experiments": med, "runs": runs}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m swaplab.kernel.calibrate")
    ap.add_argument("--reps", default="3")
    ap.add_argument("--size", default="96M")
    ap.add_argument("--refit", metavar="FILE",
                    help="no runs: fit again the runs of an earlier calibration file")
    ap.add_argument("--multi", action="store_true",
                    help="run the multi-process experiments (with --refit: added to its runs)")
    ap.add_argument("--stored", metavar="FILE",
                    help="no runs: fit the stored kernel runs of FILE and the stored agreement runs beside it")
    ap.add_argument("--train", action="append", metavar="FILE[+FILE...][:SEEDS]",
                    help="with --stored: agreement runs fitted (default: the file's own method.train, "
                         "else f19 seeds 1-3); several files joined by + are repetitions")
    ap.add_argument("--heldout", action="append", metavar="FILE[+FILE...][:SEEDS]",
                    help="with --stored: agreement runs only predicted (default: the file's own method.heldout)")
    ap.add_argument("--measured", metavar="cpu|sys",
                    help="with --stored: the kernel's time to fit, cpu (user + system time; "
                         "kernel-findings F34) or sys (system time alone; default: the file's own "
                         "method.measured, else sys)")
    ap.add_argument("--json", required=True)
    a = ap.parse_args(argv)
    import platform
    if (a.train or a.heldout) and not a.stored:
        sys.stderr.write("calibrate: error: --train and --heldout need --stored\n")
        return 2
    if a.measured and not a.stored:
        sys.stderr.write("calibrate: error: --measured needs --stored (the runs record both times)\n")
        return 2
    if a.stored:
        import os
        from ..results import load_json_file
        try:
            cal = load_json_file(a.stored, "--stored")
            if not isinstance(cal, dict) or cal.get("schema") != "swaplab.cost-calibration/1":
                raise ParamError(f"--stored '{a.stored}' is not a swaplab.cost-calibration/1 file")
            method = cal.get("method") if isinstance(cal.get("method"), dict) else {}
            train = (tuple(parse_spec(t, "--train") for t in a.train) if a.train else
                     spec_of_json(method["train"], "train") if "train" in method else TRAIN)
            heldout = (tuple(parse_spec(t, "--heldout") for t in a.heldout) if a.heldout else
                       spec_of_json(method["heldout"], "heldout") if "heldout" in method else HELDOUT)
            measured = a.measured or method.get("measured", "sys")
            if measured not in A.MEASURED:
                raise ParamError(f"--measured '{measured}' is not one of {', '.join(A.MEASURED)}")
            try:
                out = stored_calibration(cal, os.path.dirname(os.path.abspath(a.stored)), train, heldout,
                                         measured)
            except (KeyError, TypeError) as e:
                raise ParamError(f"--stored '{a.stored}' or an agreement file beside it lacks {e}") from None
        except ParamError as e:
            sys.stderr.write(f"calibrate: error: {e}\n")
            return 2
        for t in out["agreement"]:
            name = t["file"] if isinstance(t["file"], str) else "+".join(t["file"])
            print(f"{t['role']:>8} {name} seeds {t['seeds']}: {A.TIME_LABEL[measured]} within 15 % in "
                  f"{t['within_15pct']} of {t['settings']}", file=sys.stderr)
        write_json(a.json, out)
        return 0
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
            r["features"] = run_features(r, old["size_bytes"])
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
                             "user_seconds": res["time"]["user_seconds"], "raw": raw})
                rows[-1]["features"] = run_features(rows[-1], size)
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
