"""Model vs kernel on the reclaim workloads (issue 13's targets;
docs/kernel-findings.md F10).

    python -m swaplab.kernel.agree [--seeds 5] [--workloads usemem,pmbench,build]
        [--mthp 4K,64K,all] [--cost docs/data/cost-calibration-6.18-f34.json] [--window N] [--stat-flush N]
        [--model-window W[,W...]] [--measured cpu|sys] --json PATH
    python -m swaplab.kernel.agree --rescore STORED[,STORED...] [--counts quietest|mean] [--cost FILE]
        [--model-window W[,W...]] [--measured cpu|sys] --json PATH

For each workload at two sizes and three mTHP settings (4K only, 64K, every
size 16K..2M) and each seed, runs the model (policy linux-6.18, swaplab
run's code) and the kernel (the reclaim harness) with the same parameters,
and reports per setting the means over the seeds: per-size swpout and
swpin, fallback %, and the system time (the model's prediction with the
calibrated costs against the kernel's measured time: `--measured cpu`, the
default, is the workload's user + system time, which tick accounting
splits unreliably for short processes (kernel-findings F34); `sys` the
system time alone, what files before F34 store). `--window 1`
runs the kernel's processes one operation at a time, as the model executes
the stream (kernel-findings F17). `--model-window` runs the model with
that many operations in flight (`swaplab run --window`; docs/reclaim.md
"Two processes at once"; default: the model's default), a comma list
scoring each against the same kernel runs: the first is the row's
`summary` and `targets_met`, every one is under `model_windows`. Needs
what the harness needs (root, zram, a memory cgroup); changes nothing it
does not restore.

`--rescore STORED` needs no kernel: it re-scores a stored agreement file
against the model as it is now, with `--cost` and `--model-window`: the
model runs again for every stored seed, and its counts and prediction are
compared with the stored kernel's counts and measured system time
(docs/cost-calibration.md). Several files of the same settings are
repetitions of one experiment: for each setting and seed the run with the
least system time stands for them (`quietest()`; kernel-findings F25);
with `--counts mean` its counts are the means over the repetitions, its
system time still the quietest's (kernel-findings F29: where the kernel's
counts vary from run to run, the quietest run is a draw from them).

Both modes end by printing, per model window, how many settings meet each
target (`tally()`; kernel-findings F24 compares the windows with it).
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys

from .. import reclaim as model
from ..params import ParamError, parse_count
from ..results import check_outputs, load_json_file, write_json
from . import machine as M
from . import reclaim as R

# the calibration the model's predictions use by default: the fit on runs
# of a quiet machine, trained on the quietest of three repetitions with the
# statistics read before every operation, of the workload's user + system
# time (kernel-findings F25, F28, F31, F34)
DEFAULT_COST = "docs/data/cost-calibration-6.18-f34.json"
# the kernel driver flushes the group's statistics every this many
# operations: a run shorter than the kernel's 2 s flush otherwise reclaims
# on statistics as old as the group (kernel-findings F18, F28); every
# operation, as the model's are always current (F31)
STAT_FLUSH = 1
ALL = "16K,32K,64K,128K,256K,512K,1M,2M"
MTHP = (("4K", "none"), ("64K", "64K"), ("all", ALL))
# What a kernel run's measured time is (kernel-findings F34): "cpu", the
# workload's user + system time, its CPU time (exact: under tick accounting a
# short process's kernel time may all be reported as user time, and the
# drivers do almost no user work); "sys", the system time alone (agreement
# files before F34 store only that)
MEASURED = ("cpu", "sys")
DEFAULT_MEASURED = "cpu"
TIME_LABEL = {"cpu": "user + system time", "sys": "system time"}


def stored_time(k: dict) -> dict:
    """A stored run's kernel record ("sys", "user": absent before F34) as
    a result's "time"."""
    return {"sys_seconds": k["sys"], "user_seconds": k.get("user")}


def measured_seconds(t: dict, measured: str, where: str = "") -> float:
    """The measured time of a kernel run from its result's "time"."""
    if measured == "sys":
        return t["sys_seconds"]
    if t.get("user_seconds") is None:
        raise ParamError(f"{where or 'a kernel run'}: no user time stored (an agreement file before "
                         "kernel-findings F34); --measured cpu needs it, --measured sys does not")
    return t["sys_seconds"] + t["user_seconds"]
# (label, options) per workload: a base size and twice it
SIZES = {
    "usemem": (("4x8M/16M", ["--procs", "4", "--size", "8M", "--limit", "16M", "--reread", "1"]),
               ("4x16M/32M", ["--procs", "4", "--size", "16M", "--limit", "32M", "--reread", "1"])),
    # working set 1.5x the limit: at 2x (2 x 16M in 16M) the memory cgroup
    # OOM-killed a process once in about 20 runs with swap to spare (F10)
    "pmbench": (("2x12M/16M", ["--procs", "2", "--wss", "12M", "--limit", "16M", "--accesses", "20000"]),
                ("2x24M/32M", ["--procs", "2", "--wss", "24M", "--limit", "32M", "--accesses", "40000"])),
    "build": (("j4/32M", ["--jobs", "4", "--generations", "3", "--limit", "32M", "--size-median", "6M",
                          "--size-max", "32M", "--size-min", "1M"]),
              ("j4/64M", ["--jobs", "4", "--generations", "3", "--limit", "64M", "--size-median", "12M",
                          "--size-max", "64M", "--size-min", "2M"])),
}


def calibration_note(path: str, release: str) -> str | None:
    """One line when the calibration in `path` was measured on another
    kernel build than `release` (kernel-findings F36: the same settings
    took 0.71-1.05 of the CPU time on another build, and a fit made there
    met 11 of 18 where this build's own met 16)."""
    cal = load_json_file(path, "--cost")
    measured_on = cal.get("kernel") if isinstance(cal, dict) else None
    if not measured_on or measured_on == release:
        return None
    return (f"note: the cost calibration {path} was measured on kernel {measured_on}, this is {release}: "
            "the predicted times may be off; fit this machine's with python -m swaplab.kernel.calibrate "
            "(docs/cost-calibration.md) and pass it with --cost")


def cost_from_calibration(path: str) -> dict:
    """The calibrated sl_cost_model coefficients the model accepts (ns)."""
    cal = load_json_file(path, "--cost")
    known = set(model._core.cost_default()) - {"name"}
    return {k: v for k, v in cal["sl_cost_model"].items() if k in known and isinstance(v, (int, float))}


def run_argv(workload: str, opts: list, mthp: str, seed: int) -> list:
    """The options of one setting and seed, the same for the model and the
    kernel harness."""
    return [workload, *opts, "--mthp", mthp, "--seed", str(seed), "--swap-size", "256M", "--cpus", "2", "-q"]


def model_run(workload: str, opts: list, mthp: str, seed: int, cost: dict | None,
              window: int = model.DEFAULT_WINDOW) -> dict:
    """The model's result (policy linux-6.18) for one setting and seed."""
    a = model.build_parser().parse_args(run_argv(workload, opts, mthp, seed))
    prm, preset = model.params_from_args(a)
    return model.run_reclaim(prm, "linux-6.18", 0, cost, preset, window)


def model_runs(workload: str, opts: list, mthp: str, seed: int, cost: dict | None, windows: list) -> list:
    """The model's result for each window."""
    return [model_run(workload, opts, mthp, seed, cost, w) for w in windows]


def one(workload: str, opts: list, mthp: str, seed: int, cost: dict, window: int = 0,
        model_windows: tuple = (model.DEFAULT_WINDOW,), stat_flush: int = 0) -> tuple[list, dict]:
    """(the model's results, one per model window; the kernel's result)."""
    argv = run_argv(workload, opts, mthp, seed)
    mres = model_runs(workload, opts, mthp, seed, cost, list(model_windows))
    kargv = argv + (["--window", str(window)] if window else [])
    kargv += ["--stat-flush", str(stat_flush)] if stat_flush else []
    ka = R.build_parser().parse_args(kargv)
    kp = R.params_from_args(ka, kargv)
    kp.cost = dict(model._core.cost_default(), **cost)
    kres, _ = R.run_kernel(kp)
    return mres, kres


def _rel(m: float, k: float) -> float | None:
    return None if k == 0 else (m - k) / k


# compared where both sides have them, never a target: a large folio's
# failed charge at a fault (anon_fault_fallback_charge) and at a swap-in
# (swpin_fallback_charge; kernel-findings F36)
CHARGE_FALLBACKS = ("charge_fallback", "swpin_fallback_charge")


def summarize(pairs: list, measured: str = "sys") -> dict:
    """Means over the seeds of one setting; the kernel's time is `measured`
    (MEASURED). The charge fallbacks are compared only where every run that
    has the size has the field."""
    sizes = sorted({kb for m, k in pairs for kb in list(m["sizes"]) + list(k["sizes"])}, key=int)
    out = {"sizes": {}}
    for kb in sizes:
        row = {}
        for what in ("swpout", "swpin", "swpout_fallback", *CHARGE_FALLBACKS):
            if what in CHARGE_FALLBACKS and not all(what in r["sizes"][kb] for p in pairs for r in p
                                                    if kb in r["sizes"]):
                continue  # a run stored before the field existed
            mv = statistics.mean(m["sizes"].get(kb, {}).get(what, 0) for m, _ in pairs)
            kv = statistics.mean(k["sizes"].get(kb, {}).get(what, 0) for _, k in pairs)
            row[what] = {"model": mv, "kernel": kv, "rel": _rel(mv, kv)}
        mf = statistics.mean(m["sizes"].get(kb, {}).get("fallback_pct", 0) for m, _ in pairs)
        kf = statistics.mean(k["sizes"].get(kb, {}).get("fallback_pct", 0) for _, k in pairs)
        row["fallback_pct"] = {"model": mf, "kernel": kf, "diff_pp": mf - kf}
        out["sizes"][kb] = row
    ms = statistics.mean(m["cost"]["predicted_sys_seconds"] for m, _ in pairs)
    ks = statistics.mean(measured_seconds(k["time"], measured) for _, k in pairs)
    kps = [k["cost"]["predicted_sys_seconds"] for _, k in pairs]
    # a re-scored stored run (--rescore) has no kernel-side prediction
    kp = None if None in kps else statistics.mean(kps)
    out["sys_seconds"] = {"model_predicted": ms, "kernel_measured": ks, "kernel_predicted": kp,
                          "rel": _rel(ms, ks)}
    return out


def verdict(s: dict) -> dict:
    """The issue's targets: swpout within 5 %, fallback within 2 pp, swap-ins
    within 10 %, predicted system time within 15 % (sizes that moved)."""
    def ok(x, lim):
        # both zero agrees; the kernel zero and the model not does not
        if not x["kernel"] and not x["model"]:
            return True
        return x["rel"] is not None and abs(x["rel"]) <= lim
    v = {"swpout": all(ok(r["swpout"], 0.05) for r in s["sizes"].values()),
         "fallback": all(abs(r["fallback_pct"]["diff_pp"]) <= 2 for r in s["sizes"].values()),
         "swpin": all(ok(r["swpin"], 0.10) for r in s["sizes"].values()),
         "sys": s["sys_seconds"]["rel"] is not None and abs(s["sys_seconds"]["rel"]) <= 0.15}
    return v


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m swaplab.kernel.agree")
    ap.add_argument("--seeds", default="5")
    ap.add_argument("--workloads", default="usemem,pmbench,build")
    ap.add_argument("--mthp", default=",".join(label for label, _ in MTHP),
                    help="the mTHP settings to run, by label (default: all three)")
    ap.add_argument("--cost", default=DEFAULT_COST)
    ap.add_argument("--window", default="0",
                    help="the kernel driver's operations in flight (1: serial; default 0: 2 per CPU)")
    ap.add_argument("--stat-flush", default=str(STAT_FLUSH), metavar="N",
                    help="the kernel driver reads the group's memory.stat before every Nth operation, "
                         "which keeps the statistics reclaim and the workingset read current, as the "
                         f"model's are (kernel-findings F28, F31; default {STAT_FLUSH}; 0: the kernel's 2 s "
                         "flush alone)")
    ap.add_argument("--model-window", default=str(model.DEFAULT_WINDOW),
                    help="the model's operations in flight, a comma list (the first is the summary's; "
                         "0: 2 per CPU)")
    ap.add_argument("--rescore", metavar="STORED",
                    help="no kernel: re-score a stored agreement file against the model with --cost; "
                         "a comma list: repetitions, each setting and seed's quietest run")
    ap.add_argument("--counts", default="quietest",
                    help="with several --rescore files, the kernel's counts of each setting and seed: "
                         "quietest (the quietest run's, default) or mean (the mean over every "
                         "repetition; the system time stays the quietest's; kernel-findings F29)")
    ap.add_argument("--measured", default=DEFAULT_MEASURED,
                    help="the kernel's time to predict: cpu (user + system time, default; "
                         "kernel-findings F34) or sys (system time alone: agreement files before F34)")
    ap.add_argument("--json", required=True)
    a = ap.parse_args(argv)
    try:
        if a.measured not in MEASURED:
            raise ParamError(f"--measured '{a.measured}' is not one of {', '.join(MEASURED)}")
        mwins = [model.parse_window(x, "--model-window") for x in a.model_window.split(",")]
    except ParamError as e:
        sys.stderr.write(f"agree: error: {e}\n")
        return 2
    if a.rescore is not None:
        try:
            paths = a.rescore.split(",")
            check_outputs([("--json", a.json)], [("--rescore", p) for p in paths] + [("--cost", a.cost)])
            stored = [load_json_file(p, "--rescore") for p in paths]
            if a.counts not in COUNTS:
                raise ParamError(f"--counts '{a.counts}' is not one of {', '.join(COUNTS)}")
            if len(stored) > 1:
                stored = [quietest(stored, paths, a.counts, a.measured)]
            elif a.counts != "quietest":
                raise ParamError("--counts mean needs several --rescore files (repetitions)")
            out = rescore(stored[0], cost_from_calibration(a.cost), a.rescore, mwins, a.measured)
        except ParamError as e:
            sys.stderr.write(f"agree: error: {e}\n")
            return 2
        for row in out["rows"]:
            if "summary" in row:
                print(line(row), file=sys.stderr)
        for ln in tally_large_lines(out):
            print(ln, file=sys.stderr)
        n, tot = sys_within(out)
        print(f"{TIME_LABEL[a.measured]} within 15 %: {n} of {tot} settings", file=sys.stderr)
        for ln in tally_lines(out):
            print(ln, file=sys.stderr)
        write_json(a.json, out)
        return 0
    try:
        seeds = parse_count(a.seeds, "--seeds", 1, 100)
        window = model.parse_window(a.window)
        stat_flush = parse_count(a.stat_flush, "--stat-flush", 0, 1 << 20)
        wls = a.workloads.split(",")
        for w in wls:
            if w not in SIZES:
                raise ParamError(f"unknown workload '{w}' (known: {', '.join(SIZES)})")
        labels = a.mthp.split(",")
        for m in labels:
            if m not in dict(MTHP):
                raise ParamError(f"unknown --mthp setting '{m}' (known: {', '.join(label for label, _ in MTHP)})")
        cost = cost_from_calibration(a.cost)
        rows = []
        for w in wls:
            for size_label, opts in SIZES[w]:
                for mlabel, mthp in (x for x in MTHP if x[0] in labels):
                    pairs, failed, ok = [], [], []
                    for seed in range(1, seeds + 1):
                        try:
                            pairs.append(one(w, opts, mthp, seed, cost, window, tuple(mwins), stat_flush))
                            ok.append(seed)
                        except M.HarnessError as e:
                            # a kernel run that failed (an OOM kill): recorded, not averaged
                            failed.append({"seed": seed, "error": str(e)})
                            print(f"{w} {size_label} {mlabel} seed {seed}: {e}", file=sys.stderr)
                    if not pairs:
                        rows.append({"workload": w, "size": size_label, "mthp": mlabel, "failed": failed})
                        continue
                    row = agreement_row(w, size_label, mlabel, ok, [m for m, _ in pairs],
                                        [k for _, k in pairs], failed, mwins, a.measured)
                    rows.append(row)
                    print(line(row), file=sys.stderr)
    except ParamError as e:
        sys.stderr.write(f"agree: error: {e}\n")
        return 2
    except R.Signalled as e:
        sys.stderr.write(f"agree: interrupted by signal {e.signo}; machine restored\n")
        return 128 + e.signo
    release = os.uname().release
    res = {"schema": "swaplab.reclaim-agreement/1", "cost": cost, "window": window or None,
           "stat_flush": stat_flush or None, "model_windows": mwins, "measured": a.measured,
           "kernel_release": release, "rows": rows}
    note = calibration_note(a.cost, release)
    for ln in tally_large_lines(res) + tally_lines(res) + ([note] if note else []):
        print(ln, file=sys.stderr)
    write_json(a.json, res)
    return 0


def agreement_row(w: str, size_label: str, mlabel: str, seeds: list, mres: list, kres: list,
                  failed: list, windows: list, measured: str = "sys") -> dict:
    """One setting's row: mres[i] the model's results (one per model window)
    of kernel run kres[i], which ran with seeds[i] (a failed kernel run is in
    `failed`). The first window's means and verdicts are the row's
    `summary` and `targets_met`; every window's are under `model_windows`."""
    per = {}
    for j, mw in enumerate(windows):
        s = summarize([(m[j], k) for m, k in zip(mres, kres)], measured)
        per[str(mw)] = {"summary": s, "targets_met": verdict(s)}
    first = per[str(windows[0])]
    return {"workload": w, "size": size_label, "mthp": mlabel, "seeds": len(kres),
            "failed": failed, "summary": first["summary"], "targets_met": first["targets_met"],
            "model_windows": per,
            "runs": [{"seed": sd, "model": {"sizes": m[0]["sizes"], "cost": m[0]["cost"]["predicted_sys_seconds"]},
                      "models": {str(mw): {"sizes": mm["sizes"], "cost": mm["cost"]["predicted_sys_seconds"],
                                           "runner": mm["runner"]} for mw, mm in zip(windows, m)},
                      "kernel": {"sizes": k["sizes"], "sys": k["time"]["sys_seconds"],
                                 "user": k["time"].get("user_seconds"),
                                 "predicted": k["cost"]["predicted_sys_seconds"],
                                 "reclaim": k.get("reclaim")}}
                     for sd, m, k in zip(seeds, mres, kres)]}


def stored_seeds(row: dict) -> list:
    """The seeds of a stored row's runs, in order. Files written before the
    seeds were recorded numbered the runs 1, 2, ... whatever their seed;
    the seeds are 1..N less the failed ones, in order."""
    runs = row.get("runs", [])
    failed = {f["seed"] for f in row.get("failed", [])}
    seeds = [s for s in range(1, len(runs) + len(failed) + 1) if s not in failed]
    if len(seeds) != len(runs):
        raise ParamError(f"stored row {row.get('workload')} {row.get('size')} {row.get('mthp')}: "
                         f"{len(runs)} runs do not fit its failed seeds")
    return seeds


def rescore(stored: dict, cost: dict, path: str = "", windows: list | None = None,
            measured: str = "sys") -> dict:
    """A stored agreement file (swaplab.reclaim-agreement/1) scored again:
    the model runs each stored setting and seed with `cost` at each of
    `windows`; the kernel's side is the stored counts and measured system
    time, `measured` (its own prediction, made with the cost of its day, is
    left out)."""
    windows = windows or [model.DEFAULT_WINDOW]
    if not isinstance(stored, dict) or stored.get("schema") != "swaplab.reclaim-agreement/1":
        raise ParamError(f"--rescore '{path}' is not a swaplab.reclaim-agreement/1 file")
    rows = []
    try:
        for row in stored["rows"]:
            w, size_label, mlabel = row["workload"], row["size"], row["mthp"]
            if w not in SIZES or size_label not in dict(SIZES[w]) or mlabel not in dict(MTHP):
                raise ParamError(f"--rescore '{path}': unknown setting {w} {size_label} {mlabel}")
            if not row.get("runs"):
                rows.append({k: row[k] for k in ("workload", "size", "mthp", "failed")})
                continue
            seeds = stored_seeds(row)
            opts, mthp = dict(SIZES[w])[size_label], dict(MTHP)[mlabel]
            mres = [model_runs(w, opts, mthp, seed, cost, windows) for seed in seeds]
            kres = [{"sizes": r["kernel"]["sizes"], "time": stored_time(r["kernel"]),
                     "cost": {"predicted_sys_seconds": None}} for r in row["runs"]]
            for k in kres:
                measured_seconds(k["time"], measured, f"--rescore '{path}'")
            new = agreement_row(w, size_label, mlabel, seeds, mres, kres, row.get("failed", []), windows,
                                measured)
            for run, src in zip(new["runs"], row["runs"]):
                if "repetitions" in src:
                    # --counts mean: the kernel's counts are the means of so many runs
                    run["repetitions"] = src["repetitions"]
            rows.append(new)
    except (KeyError, TypeError) as e:
        raise ParamError(f"--rescore '{path}': a row lacks {e}") from None
    out = {"schema": "swaplab.reclaim-agreement/1", "cost": cost, "window": stored.get("window"),
           "model_windows": windows, "rescored_from": path, "measured": measured, "rows": rows}
    if "counts" in stored:
        out["counts"] = stored["counts"]
    return out


COUNTS = ("quietest", "mean")


def mean_sizes(runs: list) -> dict:
    """The per-size counts of several kernel runs of one setting and seed,
    averaged: every numeric field of every size any of them has (a size a
    run lacks counts 0 there)."""
    out: dict = {}
    for kb in sorted({kb for r in runs for kb in r["kernel"]["sizes"]}, key=int):
        fields = sorted({f for r in runs for f, v in r["kernel"]["sizes"].get(kb, {}).items()
                         if isinstance(v, (int, float))})
        out[kb] = {f: statistics.mean(r["kernel"]["sizes"].get(kb, {}).get(f, 0) for r in runs) for f in fields}
    return out


def quietest(stored: list, paths: list, counts: str = "quietest", measured: str = "sys") -> dict:
    """Stored agreement files that repeat one experiment (the same settings
    and seeds, each a full kernel run): one file in the same form whose run
    of each setting and seed is the repetition with the least system time.
    System time on this VM only grows with what else the host runs
    (kernel-findings F25), so the least of several repetitions is the
    closest to the workload's own cost, as for the calibration's
    experiments (least by `measured`: system time, or user + system time).
    A seed that failed in every repetition stays failed.
    With `counts` "mean" the run keeps the quietest's system time but its
    per-size counts are the means over every repetition of that seed that
    ran (`repetitions`): the counts do not depend on the host's load, and
    where two CPUs make the kernel's counts vary from run to run (several
    kinds of run for one seed), the quietest is a draw from them
    (kernel-findings F29)."""
    if counts not in COUNTS:
        raise ParamError(f"--counts '{counts}' is not one of {', '.join(COUNTS)}")
    rows: dict = {}
    for st, path in zip(stored, paths):
        if not isinstance(st, dict) or st.get("schema") != "swaplab.reclaim-agreement/1":
            raise ParamError(f"--rescore '{path}' is not a swaplab.reclaim-agreement/1 file")
        if st.get("window") != stored[0].get("window"):
            raise ParamError(f"--rescore '{path}': kernel window {st.get('window')}, "
                             f"'{paths[0]}' {stored[0].get('window')}: not repetitions of one experiment")
        try:
            for row in st["rows"]:
                key = (row["workload"], row["size"], row["mthp"])
                seeds = stored_seeds(row) if row.get("runs") else []
                failed = {f["seed"]: f for f in row.get("failed", [])}
                n = len(seeds) + len(failed)
                slot = rows.setdefault(key, {"n": n, "runs": {}, "failed": {}})
                if slot["n"] != n:
                    raise ParamError(f"--rescore '{path}': {' '.join(key)} has {n} seeds, another file "
                                     f"{slot['n']}")
                for sd, run in zip(seeds, row.get("runs", [])):
                    best = slot["runs"].get(sd)
                    here = measured_seconds(stored_time(run["kernel"]), measured, f"--rescore '{path}'")
                    if best is None or here < measured_seconds(stored_time(best["kernel"]), measured):
                        slot["runs"][sd] = dict(run, seed=sd)
                    slot.setdefault("all", {}).setdefault(sd, []).append(run)
                slot["failed"].update(failed)
        except (KeyError, TypeError) as e:
            raise ParamError(f"--rescore '{path}': a row lacks {e}") from None
    out = []
    for (w, size, mlabel), slot in rows.items():
        runs = [slot["runs"][sd] for sd in sorted(slot["runs"])]
        if counts == "mean":
            runs = [dict(r, kernel=dict(r["kernel"], sizes=mean_sizes(slot["all"][r["seed"]])),
                         repetitions=len(slot["all"][r["seed"]])) for r in runs]
        failed = [slot["failed"][sd] for sd in sorted(slot["failed"]) if sd not in slot["runs"]]
        row = {"workload": w, "size": size, "mthp": mlabel, "failed": failed}
        if runs:
            row["runs"] = runs
        out.append(row)
    return {"schema": "swaplab.reclaim-agreement/1", "window": stored[0].get("window"),
            "quietest_of": list(paths), "counts": counts, "rows": out}


TARGETS = ("swpout", "fallback", "swpin", "sys")


def tally(res: dict) -> dict:
    """Per model window, how many settings meet each target, of those that
    ran: {window: {"settings": n, "swpout": met, ...}} (kernel-findings F24)."""
    out = {}
    for row in res["rows"]:
        for w, per in row.get("model_windows", {}).items():
            t = out.setdefault(w, dict({"settings": 0}, **{k: 0 for k in TARGETS}))
            t["settings"] += 1
            for k in TARGETS:
                t[k] += bool(per["targets_met"][k])
    return out


def tally_lines(res: dict) -> list:
    """tally() as one line per model window."""
    return [f"model window {w}: of {t['settings']} settings, " +
            ", ".join(f"{k} {t[k]}" for k in TARGETS) + " met"
            for w, t in tally(res).items()]


def tally_large(res: dict, min_folios: int = 100) -> dict:
    """Per model window, how many settings meet the swpout and swap-in
    targets counting only the sizes the kernel swaps out (in) at least
    `min_folios` folios of, on the seeds' mean: where a size is a few
    folios, one folio is 5-30 % (kernel-findings F19, F28, F29)."""
    out = {}
    for row in res["rows"]:
        for w, per in row.get("model_windows", {}).items():
            t = out.setdefault(w, {"settings": 0, "swpout": 0, "swpin": 0})
            t["settings"] += 1
            for what, lim in (("swpout", 0.05), ("swpin", 0.10)):
                big = [r[what] for r in per["summary"]["sizes"].values() if r[what]["kernel"] >= min_folios]
                t[what] += all(x["rel"] is not None and abs(x["rel"]) <= lim for x in big)
    return out


def tally_large_lines(res: dict, min_folios: int = 100) -> list:
    """tally_large() as one line per model window."""
    return [f"model window {w}, sizes of {min_folios} folios or more: of {t['settings']} settings, "
            f"swpout {t['swpout']}, swpin {t['swpin']} met" for w, t in tally_large(res, min_folios).items()]


def sys_within(res: dict) -> tuple[int, int]:
    """Settings whose predicted system time is within the target, of those
    that ran."""
    met = [r["targets_met"]["sys"] for r in res["rows"] if "targets_met" in r]
    return sum(met), len(met)


def line(row: dict) -> str:
    s = row["summary"]
    parts = []
    for kb, r in s["sizes"].items():
        so, si = r["swpout"], r["swpin"]
        if so["kernel"] or so["model"] or si["kernel"] or si["model"]:
            parts.append(f"{kb}K out {so['model']:.0f}/{so['kernel']:.0f} in {si['model']:.0f}/{si['kernel']:.0f}"
                         f" fb {r['fallback_pct']['model']:.1f}/{r['fallback_pct']['kernel']:.1f}")
    ss = s["sys_seconds"]
    t = row["targets_met"]
    return (f"{row['workload']:>7} {row['size']:>10} {row['mthp']:>4}: " + "; ".join(parts) +
            f"; sys {ss['model_predicted']:.3f}/{ss['kernel_measured']:.3f}"
            f" [{' '.join(k for k, v in t.items() if v) or '-'} met]")


if __name__ == "__main__":
    sys.exit(main())
