"""The cost calibration's arithmetic (python -m swaplab.kernel.calibrate):
event counts from a run's counters, and the fit. The runs themselves are
live (docs/cost-calibration.md); nothing here touches the machine."""
import json
import os
import random

import pytest

from swaplab.kernel import calibrate as C
from conftest import ROOT

# agreement files before kernel-findings F34 store the system time alone,
# and agree's default cost was F31's fit of it until F34
SYS = ("--measured", "sys")
F31 = os.path.join(ROOT, "docs", "data", "cost-calibration-6.18-f31.json")

RAW = {"minflt": 1700, "majflt": 900, "processes": 1,
       "sizes": {"64": {"anon_fault_alloc": 1500, "swpout": 400, "swpout_fallback": 3, "swpin": 300, "split": 2},
                 "2048": {"anon_fault_alloc": 10, "swpout": 1, "swpout_fallback": 0, "swpin": 0, "split": 0}},
       "order0": {"swpout": 100, "swpin": 50}, "pswpout": 100 + 400 * 16 + 512, "pswpin": 50 + 300 * 16,
       "pgscan_anon": 9000, "pgrefill": 700, "stream": {"ops": 387, "contended": 0.25}}


def test_features_of_a_run():
    assert C.features(RAW) == {
        "fault_folio": (1700 - 1500 - 10) + 1500, "fault_page": (1700 - 1500 - 10) + 1500 * 16,
        "fault_pmd": 10, "swpout_folio": 400 + 1 + 100, "swpout_page": 100 + 6400 + 512,
        "swpin_folio": 300 + 50, "swpin_page": 50 + 4800, "split": 3, "scan_page": 9700, "run": 1,
        # the stream's operations; a quarter of the swap-outs and swap-ins (folios) contended
        "op": 387, "lock": (400 + 1 + 100 + 300 + 50) * 0.25, "pmd_fresh": 0}
    # a faults-only run took its PMD-size blocks new: they are pmd_fresh, not fault_pmd
    fresh = C.features(RAW, fresh=True)
    assert fresh["fault_pmd"] == 0 and fresh["pmd_fresh"] == 10
    assert {k: v for k, v in fresh.items() if k not in ("fault_pmd", "pmd_fresh")} == \
        {k: v for k, v in C.features(RAW).items() if k not in ("fault_pmd", "pmd_fresh")}


RAW_2M = {"minflt": 18986, "majflt": 0, "processes": 1,
          "sizes": {"2048": {"anon_fault_alloc": 21, "swpout": 0, "swpout_fallback": 0, "swpin": 0, "split": 0}},
          "order0": {"swpout": 12873, "swpin": 0}, "pswpout": 18494, "pswpin": 0,
          "pgscan_anon": 40000, "pgrefill": 2899, "stream": {"ops": 387, "contended": 0.0}}


def test_pmd_faults_are_the_workloads_own_where_the_minor_faults_tell():
    """96 MiB (24576 pages) with 2M as the only large size and 18986 minor
    faults: 11 PMD-size faults (24576 - 11 x 511 = 18955, plus the driver's
    own), whatever the system-wide counter says (21: other processes' THP
    faults, F8). With smaller mTHP sizes too the minor faults cannot tell,
    and the counter is kept."""
    assert C.own_pmd_faults(RAW_2M, 24576) == 11
    f = C.features(RAW_2M, region_pages=24576)
    assert f["fault_pmd"] == 11 and f["fault_folio"] == 18986 - 11 and f["fault_page"] == 18986 - 11
    assert C.features(RAW_2M)["fault_pmd"] == 21
    assert C.features(RAW, region_pages=24576)["fault_pmd"] == 10  # 64K faulted too: the counter


def test_stored_faults_only_2m_runs_took_48_blocks_each():
    """The calibration's "faults 2M" runs (96 MiB, no limit pressure): the
    system-wide counter said 48-64 PMD-size faults, the workload's own minor
    faults say 48 in every repetition, and all of them are pmd_fresh."""
    cal = _calibration()
    runs = [r for r in cal["runs"] if r["label"] == "faults 2M"]
    assert len(runs) == 5
    assert sorted(r["raw"]["sizes"]["2048"]["anon_fault_alloc"] for r in runs) == [48, 50, 58, 61, 64]
    for r in runs:
        f = C.run_features(r, cal["size_bytes"])
        assert f["pmd_fresh"] == 48 and f["fault_pmd"] == 0
    for r in cal["runs"]:
        if r["label"] in ("swapout 2M", "swapin 2M"):
            f = C.run_features(r, cal["size_bytes"])
            assert f["fault_pmd"] == 11 and f["pmd_fresh"] == 0


def test_stream_counts_are_the_models_for_the_same_stream():
    """ops and the contended share come from the model's run of the same
    stream: two processes on two CPUs contend on every swap event, on one
    CPU never."""
    argv = ["usemem", "--procs", "2", "--size", "16M", "--limit", "16M", "--reread", "0",
            "--swap-size", "64M", "--mthp", "none", "-q"]
    # START, MMAP, 64 touches of 64 pages, EXIT per process
    assert C.stream_counts(argv + ["--cpus", "2"]) == {"ops": 2 * 67, "procs": 2, "contended": 1.0}
    assert C.stream_counts(argv + ["--cpus", "1"]) == {"ops": 2 * 67, "procs": 2, "contended": 0.0}


def _calibration():
    with open(os.path.join(ROOT, "docs", "data", "cost-calibration-6.18.json")) as f:
        return json.load(f)


def test_kernel_side_prediction_of_a_model_run_is_the_models_own():
    """The harness's predict_sys applied to a model result's counts, with
    the same stream's ops, processes and contended share, gives the
    model's sl_cost_predict: the two sides use the same terms (the
    calibrated op, proc and lock_wait included)."""
    from swaplab import reclaim as model
    from swaplab.kernel import reclaim as R
    cost = _calibration()["sl_cost_model"]
    assert cost["op"] > 0 and cost["lock_wait"] > 0
    cost = dict(cost, proc=1000.0)  # the fit's proc is 0: give the term a weight
    for argv in (["usemem", "--procs", "3", "--cpus", "2", "--size", "8M", "--limit", "12M", "--reread", "1"],
                 ["build", "--jobs", "3", "--generations", "2", "--limit", "16M", "--size-median", "6M",
                  "--mthp", "16K,64K,2M"]):
        prm, preset = model.params_from_args(model.build_parser().parse_args(argv + ["-q"]))
        res = model.run_reclaim(prm, "linux-6.18", 0, {k: v for k, v in cost.items() if k != "name"}, preset)
        st = R.stream_counts(res["params"])
        assert st["procs"] == res["processes"] and st["ops"] == res["cost"]["ops"]
        assert R.predict_sys(cost, res, st) == pytest.approx(res["cost"]["predicted_sys_seconds"], abs=1e-6)


@pytest.mark.parametrize("name", ["f12/usemem-1x32M-16M-64K-reread1.json", "f12/usemem-4x16M-32M-64K-cpus1.json",
                                  "f12/usemem-4x16M-32M-64K-cpus2.json", "f13/usemem-1x48M-16M-4K-reread0.json"])
def test_kernel_side_prediction_of_stored_runs_is_the_calibration_fit(name):
    """On stored kernel runs (docs/data), the harness's prediction with the
    calibrated costs equals the fit's own prediction from the same counts
    (calibrate.features: the op and lock features included): the kernel
    side predicts with what was fitted."""
    from swaplab.kernel import reclaim as R
    cal = _calibration()
    with open(os.path.join(ROOT, "docs", "data", name)) as f:
        res = json.load(f)
    st = R.stream_counts(res["params"])
    feat = C.features(dict(C.raw_counts(res), stream=st))
    fit = sum(cal["coefficients"][k] * feat[k] for k in C.FEATURES)
    assert R.predict_sys(cal["sl_cost_model"], res, st) == pytest.approx(fit, rel=1e-5)


def test_kernel_side_prediction_counts_contention_and_operations():
    """Four usemem processes on two CPUs (kernel run, docs/data/f12): every
    swap event is contended; the prediction is 0.245 s against 0.260 s
    measured, where the terms without operations and contention give
    0.132 s."""
    from swaplab.kernel import reclaim as R
    cost = _calibration()["sl_cost_model"]
    with open(os.path.join(ROOT, "docs", "data", "f12", "usemem-4x16M-32M-64K-cpus2.json")) as f:
        res = json.load(f)
    st = R.stream_counts(res["params"])
    assert st == {"ops": 524, "procs": 4, "contended": 1.0}
    assert R.predict_sys(cost, res, st) == pytest.approx(0.244749, abs=1e-6)
    bare = R.predict_sys(cost, res, {"ops": 0, "procs": 0, "contended": 0.0})
    assert bare == pytest.approx(0.1318, abs=1e-4)
    assert res["time"]["sys_seconds"] == pytest.approx(0.260294)


def test_order0_faults_never_negative():
    raw = dict(RAW, minflt=100)
    assert C.features(raw)["fault_folio"] == 1500


def test_fit_recovers_planted_costs():
    rng = random.Random(5)
    planted = {f: rng.uniform(1e-7, 1e-5) for f in C.FEATURES}
    planted["run"] = 2e-3
    rows = []
    for _ in range(40):
        feat = {f: rng.randrange(0, 50000) for f in C.FEATURES}
        feat["run"] = 1
        rows.append({"features": feat, "sys_seconds": sum(planted[f] * feat[f] for f in C.FEATURES)})
    coef, pred = C.fit(rows)
    for f in C.FEATURES:
        assert coef[f] == pytest.approx(planted[f], rel=1e-6), f
    assert pred == pytest.approx([r["sys_seconds"] for r in rows], rel=1e-9)


def test_committed_calibration_is_consistent():
    """docs/data/cost-calibration-6.18.json: its experiments' medians, its
    features and its predictions follow from its runs and coefficients."""
    with open(os.path.join(ROOT, "docs", "data", "cost-calibration-6.18.json")) as f:
        cal = json.load(f)
    assert cal["schema"] == "swaplab.cost-calibration/1"
    assert set(cal["coefficients"]) == set(C.FEATURES)
    m = cal["sl_cost_model"]
    assert m["fault_pmd_folio"] == round(cal["coefficients"]["fault_pmd"] * 1e9, 3)
    assert m["swpout_folio"] == round(cal["coefficients"]["swpout_folio"] * 1e9, 3)
    assert m == C.cost_model_of(cal["coefficients"], m["name"])
    assert "pmd_fresh" not in m  # not a term of the model (kernel-findings F22)
    assert all(v >= 0 for v in cal["coefficients"].values())
    for r in cal["runs"]:
        assert r["features"] == C.run_features(r, cal["size_bytes"])
    med = C.medians(cal["runs"])
    assert [m["label"] for m in med] == [e["label"] for e in cal["experiments"]]
    for m, e in zip(med, cal["experiments"]):
        assert m["sys_seconds"] == e["sys_seconds"]
        pred = sum(cal["coefficients"][f] * e["features"][f] for f in C.FEATURES)
        assert e["predicted_sys_seconds"] == pytest.approx(pred, abs=1e-6)


# ------------------------------------------------ model vs kernel summary

def _res(sizes, sys_pred, sys_meas=None):
    r = {"sizes": {kb: dict(zip(("swpout", "swpin", "swpout_fallback", "fallback_pct"), v))
                   for kb, v in sizes.items()},
         "cost": {"predicted_sys_seconds": sys_pred}}
    if sys_meas is not None:
        r["time"] = {"sys_seconds": sys_meas}
    return r


def test_agreement_summary_and_targets():
    from swaplab.kernel import agree as A
    pairs = [(_res({"4": (100, 50, 0, 0.0), "64": (10, 4, 0, 0.0)}, 1.0),
              _res({"4": (104, 50, 0, 0.0), "64": (10, 5, 1, 9.0)}, 0.2, 1.1)),
             (_res({"4": (100, 50, 0, 0.0), "64": (10, 4, 0, 0.0)}, 1.0),
              _res({"4": (96, 50, 0, 0.0), "64": (10, 5, 1, 9.0)}, 0.2, 0.9))]
    s = A.summarize(pairs)
    assert s["sizes"]["4"]["swpout"] == {"model": 100, "kernel": 100, "rel": 0.0}
    assert s["sizes"]["64"]["swpin"]["rel"] == pytest.approx(-0.2)
    assert s["sizes"]["64"]["fallback_pct"]["diff_pp"] == pytest.approx(-9.0)
    assert s["sys_seconds"]["model_predicted"] == 1.0 and s["sys_seconds"]["kernel_measured"] == 1.0
    assert A.verdict(s) == {"swpout": True, "fallback": False, "swpin": False, "sys": True}
    # the kernel swapped nothing where the model did: not agreement
    pairs0 = [(_res({"4": (100, 0, 0, 0.0)}, 1.0), _res({"4": (0, 0, 0, 0.0)}, 0.0, 1.0))]
    assert A.verdict(A.summarize(pairs0))["swpout"] is False
    # the charge fallbacks are compared where every run has them (F36), and
    # are no target
    for m, k in pairs:
        for r, v in ((m, 3), (k, 4)):
            r["sizes"]["64"].update(charge_fallback=v, swpin_fallback_charge=2 * v)
    s = A.summarize(pairs)
    assert s["sizes"]["64"]["charge_fallback"] == {"model": 3, "kernel": 4, "rel": -0.25}
    assert s["sizes"]["64"]["swpin_fallback_charge"] == {"model": 6, "kernel": 8, "rel": -0.25}
    assert "charge_fallback" not in s["sizes"]["4"]
    assert A.verdict(s) == {"swpout": True, "fallback": False, "swpin": False, "sys": True}
    del pairs[1][1]["sizes"]["64"]["swpin_fallback_charge"]  # a kernel run stored before F36
    s = A.summarize(pairs)
    assert "swpin_fallback_charge" not in s["sizes"]["64"] and "charge_fallback" in s["sizes"]["64"]


@pytest.mark.parametrize("args,msg", [
    (["--mthp", "64K,32K"], "unknown --mthp setting '32K' (known: 4K, 64K, all)"),
    (["--window", "-1"], "--window -1 is negative"),
    (["--model-window", "1,z"], "--model-window 'z' is not a non-negative integer"),
    (["--model-window", "5000"], "--model-window 5000 is outside 0..4096"),
])
def test_agreement_refuses_bad_options(tmp_path, capsys, args, msg):
    from swaplab.kernel import agree as A
    out = tmp_path / "a.json"
    assert A.main([*args, "--json", str(out)]) == 2
    assert capsys.readouterr().err == f"agree: error: {msg}\n"
    assert not out.exists()


# ------------------------------------------------ the fit on stored runs

def test_model_features_give_the_models_own_prediction():
    """model_features() are the terms of the model's sl_cost_predict: with
    any cost, the sum over them is the run's predicted_sys_seconds (a 2M
    fault by fault_pmd_folio alone; lock waits; operations; processes)."""
    from swaplab.kernel import agree as A
    cost = dict(_calibration()["sl_cost_model"], proc=1000.0, split=700.0)
    cost.pop("name")
    for w, size, mthp in (("usemem", "4x8M/16M", "all"), ("build", "j4/32M", "all"), ("pmbench", "2x12M/16M", "64K")):
        res = A.model_run(w, dict(A.SIZES[w])[size], dict(A.MTHP)[mthp], 2, cost)
        f = C.model_features(res)
        assert f["fault_pmd"] == res["sizes"].get("2048", {}).get("faults", 0)
        assert C.predict_ns_model(cost, f) == pytest.approx(res["cost"]["predicted_sys_seconds"], abs=1e-6)
        assert C.model_features(res, serial=True)["lock"] == 0


def test_stored_fit_is_deterministic_and_is_the_committed_calibration():
    """`calibrate --stored` (no kernel): the same stored files give the same
    file twice, and the committed calibration is its output (the golden of
    the fitted coefficients, ns)."""
    base = os.path.join(ROOT, "docs", "data")
    a = C.stored_calibration(_calibration(), base)
    b = C.stored_calibration(_calibration(), base)
    assert a == b
    assert json.loads(json.dumps(a)) == _calibration()
    m = a["sl_cost_model"]
    assert {k: round(v) for k, v in m.items() if k != "name"} == {
        "fault_folio": 2366, "fault_page": 368, "fault_pmd_folio": 181240, "swpout_folio": 2936,
        "swpout_page": 600, "swpin_folio": 1647, "swpin_page": 2098, "split": 0, "scan_page": 476,
        "proc": 0, "op": 5071, "lock_wait": 6590}
    assert round(a["coefficients"]["pmd_fresh"] * 1e9) == 5620377
    # a PMD-size fault in a recycled block costs what its 512 pages do
    # (within 6 %: 184 351 against 191 813 ns)
    assert m["fault_pmd_folio"] == pytest.approx(m["fault_folio"] + 512 * m["fault_page"], rel=0.06)
    assert a["fit"] == {"experiments": 27, "runs": 111, "agreement_runs": 50, "time_of_experiment": "min",
                        "experiments_mean_abs_rel_error": 0.0965, "experiments_max_abs_rel_error": 0.3912}
    within = {(t["file"], t["role"]): (t["within_15pct"], t["settings"]) for t in a["agreement"]}
    assert within == {("reclaim-agreement-6.18-f19.json", "train"): (13, 18),
                      ("reclaim-agreement-6.18-f19.json", "heldout"): (9, 16),
                      ("reclaim-agreement-6.18-f19b.json", "heldout"): (8, 17),
                      ("reclaim-agreement-6.18-f16b.json", "heldout"): (11, 18),
                      ("reclaim-agreement-6.18-f16.json", "heldout"): (8, 18),
                      ("reclaim-agreement-6.18-f14.json", "heldout"): (13, 17)}


def test_stored_fit_command_writes_the_file_and_refuses_other_json(tmp_path, capsys):
    out = tmp_path / "cal.json"
    assert C.main(["--stored", os.path.join(ROOT, "docs", "data", "cost-calibration-6.18.json"),
                   "--json", str(out)]) == 0
    assert json.loads(out.read_text()) == _calibration()
    assert "heldout reclaim-agreement-6.18-f19b.json seeds all: system time within 15 % in 8 of 17" \
        in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text('{"schema": "swaplab.reclaim-agreement/1", "rows": []}')
    out2 = tmp_path / "cal2.json"
    assert C.main(["--stored", str(bad), "--json", str(out2)]) == 2
    assert capsys.readouterr().err == f"calibrate: error: --stored '{bad}' is not a swaplab.cost-calibration/1 file\n"
    assert not out2.exists()
    bad.write_text('{"schema": "swaplab.cost-calibration/1", "size_bytes": 1}')
    assert C.main(["--stored", str(bad), "--json", str(out2)]) == 2
    assert capsys.readouterr().err == \
        f"calibrate: error: --stored '{bad}' or an agreement file beside it lacks 'runs'\n"
    assert not out2.exists()


# ------------------------------------------------ agree --rescore (no kernel)

def _stored(name):
    with open(os.path.join(ROOT, "docs", "data", name)) as f:
        return json.load(f)


def test_stored_seeds_are_rebuilt_from_the_failed_ones():
    """agree numbered a setting's runs 1, 2, ... whatever their seed: in
    f19, pmbench 2x12M with every size ran only seed 3 (1, 2, 4, 5
    OOM-killed), and the model's counts of its stored run were seed 3's
    (the model of F20's time; since F27's slab pages the model gives other
    counts, so only the seed's mapping and that it matters are checked)."""
    from swaplab.kernel import agree as A
    row = next(r for r in _stored("reclaim-agreement-6.18-f19.json")["rows"]
               if (r["workload"], r["size"], r["mthp"]) == ("pmbench", "2x12M/16M", "all"))
    assert [r["seed"] for r in row["runs"]] == [1] and A.stored_seeds(row) == [3]
    opts = dict(A.SIZES["pmbench"])["2x12M/16M"]
    assert A.model_run("pmbench", opts, A.ALL, 3, None)["sizes"] != \
        A.model_run("pmbench", opts, A.ALL, 1, None)["sizes"]


def test_rescoring_with_the_stored_cost_gives_the_stored_verdicts():
    """Re-scored with the cost it was run with, a stored agreement file
    gives its own model predictions and every verdict again (F28's first
    repetition, the model of its time, predicted with F25's quiet fit,
    which missed these runs: 2 of 18 settings within 15 % in system time).
    The build rows are left out: kernel-findings F38 (an exit drains its
    CPU's batch, a page table's uncharge refills the stock) changed their
    counts; so are pmbench's rows with every size, which F39 (shrink_lruvec()
    drops the active target's rest) changed, and usemem's, which F41 (the
    harness's object-stock drains) changed; F41 moved the other pmbench
    rows' predictions by less than 0.3 %, not their verdicts."""
    from swaplab.kernel import agree as A
    st = _stored("reclaim-agreement-6.18-f28.json")
    assert st["stat_flush"] == 16
    out = A.rescore(st, st["cost"], "f28", st["model_windows"])
    assert A.sys_within(out) == (2, 18)
    for a, b in zip(st["rows"], out["rows"]):
        assert (a["workload"], a["size"], a["mthp"]) == (b["workload"], b["size"], b["mthp"])
        if a["workload"] in ("build", "usemem"):
            continue
        assert b["targets_met"] == a["targets_met"]
        if (a["workload"], a["mthp"]) == ("pmbench", "all"):
            continue
        assert b["summary"]["sys_seconds"]["model_predicted"] == pytest.approx(
            a["summary"]["sys_seconds"]["model_predicted"], rel=0.003)
        assert b["summary"]["sys_seconds"]["kernel_measured"] == a["summary"]["sys_seconds"]["kernel_measured"]
        assert b["summary"]["sys_seconds"]["kernel_predicted"] is None


def test_rescoring_with_the_calibration(tmp_path, capsys):
    """`agree --rescore` with the calibration: f19 within 15 % in 12 of
    18 settings (9 before), the repeat f19b in 8 of 17; the counts'
    verdicts move only where the model changed since (F27, F28, F38, F41)."""
    from swaplab.kernel import agree as A
    out = tmp_path / "r.json"
    assert A.main([*SYS, "--rescore", os.path.join(ROOT, "docs", "data", "reclaim-agreement-6.18-f19.json"),
                   "--cost", os.path.join(ROOT, "docs", "data", "cost-calibration-6.18.json"),
                   "--json", str(out)]) == 0
    assert capsys.readouterr().err.endswith("system time within 15 %: 12 of 18 settings\n"
                                            "model window 1: of 18 settings, swpout 7, fallback 18, "
                                            "swpin 7, sys 12 met\n")
    res = json.loads(out.read_text())
    st = _stored("reclaim-agreement-6.18-f19.json")
    assert A.sys_within(res) == (12, 18)
    # the counts' verdicts are the stored model's but where the model
    # changed since: F27's slab pages made the serial usemem 4x8M 64K swap
    # in the serial kernel's 212 64K folios (these kernel runs, two CPUs at
    # once, 250); F28's refault activation moved the build j4/32M rows,
    # whose unflushed kernel runs it was not measured against, and F38's
    # exit drain and stock refill moved the 4K row back; F41's object-stock
    # drains (the driver pinned to the first CPU) moved it off again
    moved = {("usemem", "4x8M/16M", "64K"): {"swpin": False},
             ("build", "j4/32M", "4K"): {"swpout": False, "swpin": False},
             ("build", "j4/32M", "64K"): {"swpin": False}}
    for a, b in zip(st["rows"], res["rows"]):
        want = {k: v for k, v in a["targets_met"].items() if k != "sys"}
        want.update(moved.get((a["workload"], a["size"], a["mthp"]), {}))
        assert {k: v for k, v in b["targets_met"].items() if k != "sys"} == want
    cost = A.cost_from_calibration(os.path.join(ROOT, "docs", "data", "cost-calibration-6.18.json"))
    assert A.sys_within(A.rescore(_stored("reclaim-agreement-6.18-f19b.json"), cost)) == (8, 17)


@pytest.mark.parametrize("content,msg", [
    ('{"schema": "swaplab.cost-calibration/1"}', "--rescore '{p}' is not a swaplab.reclaim-agreement/1 file"),
    ('{"schema": "swaplab.reclaim-agreement/1", "rows": [{"workload": "usemem"}]}',
     "--rescore '{p}': a row lacks 'size'"),
    ('{"schema": "swaplab.reclaim-agreement/1", "rows": [{"workload": "usemem", "size": "1x1M", "mthp": "4K"}]}',
     "--rescore '{p}': unknown setting usemem 1x1M 4K"),
])
def test_rescoring_refuses_what_is_not_an_agreement_file(tmp_path, capsys, content, msg):
    from swaplab.kernel import agree as A
    src = tmp_path / "s.json"
    src.write_text(content)
    out = tmp_path / "r.json"
    assert A.main([*SYS, "--rescore", str(src), "--cost", os.path.join(ROOT, "docs", "data", "cost-calibration-6.18.json"),
                   "--json", str(out)]) == 2
    assert capsys.readouterr().err == "agree: error: " + msg.format(p=src) + "\n"
    assert not out.exists()


@pytest.mark.parametrize("args,msg", [
    (["--stat-flush", "-3"], "--stat-flush -3 is negative"),
    (["--stat-flush", "1.5"], "--stat-flush '1.5' is not a non-negative integer"),
    (["--window", "x"], "--window 'x' is not a non-negative integer"),
])
def test_agree_refuses_bad_counts_before_any_kernel_run(tmp_path, capsys, args, msg):
    from swaplab.kernel import agree as A
    out = tmp_path / "a.json"
    assert A.main([*args, "--json", str(out)]) == 2
    assert capsys.readouterr().err == f"agree: error: {msg}\n"
    assert not out.exists()
    assert A.STAT_FLUSH == 1


def test_rescoring_refuses_to_overwrite_its_input(tmp_path, capsys):
    from swaplab.kernel import agree as A
    src = tmp_path / "s.json"
    src.write_text(json.dumps(_stored("reclaim-agreement-6.18-f19.json")))
    before = src.read_bytes()
    assert A.main([*SYS, "--cost", F31, "--rescore", str(src), "--json", str(src)]) == 2
    assert capsys.readouterr().err == f"agree: error: --json '{src}' is --rescore: refusing to overwrite an input\n"
    assert src.read_bytes() == before


def test_agreement_rescore_scores_stored_kernel_runs_per_model_window(tmp_path, capsys):
    """--rescore runs no kernel: the stored kernel counts against the model
    run again, once per --model-window."""
    from swaplab.kernel import agree as A
    kernel = {"4": {"swpout": 3600, "swpin": 4200, "swpout_fallback": 0, "fallback_pct": 0.0},
              "64": {"swpout": 545, "swpin": 250, "swpout_fallback": 0, "fallback_pct": 0.0}}
    stored = {"schema": "swaplab.reclaim-agreement/1", "window": None, "rows": [
        {"workload": "usemem", "size": "4x8M/16M", "mthp": "64K", "failed": [],
         "runs": [{"seed": 1, "kernel": {"sizes": kernel, "sys": 0.13, "predicted": 0.12}}]},
        {"workload": "pmbench", "size": "2x12M/16M", "mthp": "all", "failed": [{"seed": 1, "error": "x"}]}]}
    src, out = tmp_path / "stored.json", tmp_path / "again.json"
    src.write_text(json.dumps(stored))
    assert A.main([*SYS, "--cost", F31, "--rescore", str(src), "--model-window", "1,0", "--json", str(out)]) == 0
    res = json.loads(out.read_text())
    assert res["rescored_from"] == str(src) and res["model_windows"] == [1, 0]
    row = res["rows"][0]
    got = {w: row["model_windows"][w]["summary"]["sizes"]["4"]["swpout"] for w in ("1", "0")}
    assert got == {"1": {"model": 4015, "kernel": 3600, "rel": pytest.approx(415 / 3600)},
                   "0": {"model": 3513, "kernel": 3600, "rel": pytest.approx(-87 / 3600)}}
    assert row["summary"] == row["model_windows"]["1"]["summary"]
    assert row["runs"][0]["models"]["0"]["runner"]["window"] == 4
    assert res["rows"][1] == {"workload": "pmbench", "size": "2x12M/16M", "mthp": "all",
                              "failed": [{"seed": 1, "error": "x"}]}
    capsys.readouterr()
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    assert A.main([*SYS, "--cost", F31, "--rescore", str(bad), "--json", str(tmp_path / "o.json")]) == 2
    assert capsys.readouterr().err == f"agree: error: --rescore '{bad}' is not a swaplab.reclaim-agreement/1 file\n"


def test_agreement_tally_counts_targets_met_per_model_window(tmp_path, capsys):
    """`agree --rescore ... --model-window 1,0` ends with one line per
    window: how many settings meet each target (F24's table: F21's kernel
    runs against the serial model and the one with two processes at
    once; F28's model)."""
    from swaplab.kernel import agree as A
    out = tmp_path / "r.json"
    assert A.main([*SYS, "--rescore", os.path.join(ROOT, "docs", "data", "reclaim-agreement-6.18-f21.json"),
                   "--cost", os.path.join(ROOT, "docs", "data", "cost-calibration-6.18.json"),
                   "--model-window", "1,0", "--json", str(out)]) == 0
    assert capsys.readouterr().err.endswith(
        "model window 1: of 17 settings, swpout 7, fallback 17, swpin 9, sys 13 met\n"
        "model window 0: of 17 settings, swpout 8, fallback 17, swpin 9, sys 14 met\n")
    res = json.loads(out.read_text())
    assert A.tally(res) == {"1": {"settings": 17, "swpout": 7, "fallback": 17, "swpin": 9, "sys": 13},
                            "0": {"settings": 17, "swpout": 8, "fallback": 17, "swpin": 9, "sys": 14}}
    # a setting whose kernel runs all failed is not counted
    assert A.tally({"rows": [{"workload": "pmbench", "failed": [{"seed": 1}]}]}) == {}


# ------------------------------------------------ the quiet calibration (kernel-findings F25)

def _quiet():
    with open(os.path.join(ROOT, "docs", "data", "cost-calibration-6.18-quiet.json")) as f:
        return json.load(f)


def test_quiet_fit_is_deterministic_and_is_the_committed_file(tmp_path, capsys):
    """docs/data/cost-calibration-6.18-quiet.json (F25) is `calibrate --stored`
    of itself: its own method lists what it trains on (the quietest of
    three repetitions, f25+f25b+f25c, seeds 1-3) and holds out; the golden
    of the coefficients (ns), refitted for F28's model."""
    from swaplab.kernel import agree as A
    out = tmp_path / "q.json"
    assert C.main(["--stored", os.path.join(ROOT, "docs", "data", "cost-calibration-6.18-quiet.json"),
                   "--json", str(out)]) == 0
    err = capsys.readouterr().err
    assert json.loads(out.read_text()) == _quiet()
    f25 = "+".join(f"reclaim-agreement-6.18-f25{x}.json" for x in ("", "b", "c"))
    assert f"   train {f25} seeds [1, 2, 3]: system time within 15 % in 14 of 18\n" in err
    assert f" heldout {f25} seeds [4, 5]: system time within 15 % in 12 of 18\n" in err
    q = _quiet()
    m = q["sl_cost_model"]
    assert {k: round(v) for k, v in m.items() if k != "name"} == {
        "fault_folio": 1444, "fault_page": 179, "fault_pmd_folio": 40223, "swpout_folio": 4017,
        "swpout_page": 1492, "swpin_folio": 2979, "swpin_page": 228, "split": 0, "scan_page": 211,
        "proc": 0, "op": 2519, "lock_wait": 3055}
    within = {("+".join(t["file"]) if isinstance(t["file"], list) else t["file"], t["role"], str(t["seeds"])):
              t["within_15pct"] for t in q["agreement"]}
    g = "reclaim-agreement-6.18-"
    assert within[(f"{g}f25d.json+{g}f25e.json", "heldout", "all")] == 10
    # the same coefficients miss the loaded machine's runs: they ran 25-40 % slower
    assert within[(f"{g}f24.json", "heldout", "all")] == 1
    assert A.DEFAULT_COST != "docs/data/cost-calibration-6.18-quiet.json"


def _check_stored_fit(tmp_path, capsys, name, reps, trained, heldout45, heldout_de, coefficients):
    """`calibrate --stored` of the committed fit docs/data/NAME reproduces
    it; its reports on the agreement runs reclaim-agreement-6.18-REPS
    (three repetitions, the fit's train set) and the next two; the golden
    of its coefficients (ns)."""
    g = "reclaim-agreement-6.18-"
    three = "+".join(f"{g}{reps}{x}.json" for x in ("", "b", "c"))
    _check_fit_file(tmp_path, capsys, name, [
        f"   train {three} seeds [1, 2, 3]: system time within 15 % in {trained} of 18",
        f" heldout {three} seeds [4, 5]: system time within 15 % in {heldout45} of 18",
        f" heldout {g}{reps}d.json+{g}{reps}e.json seeds all: system time within 15 % in {heldout_de} of 18"],
        coefficients)


def _check_fit_file(tmp_path, capsys, name, lines, coefficients):
    """`calibrate --stored` of the committed fit docs/data/NAME reproduces
    it and reports `lines` among its own; the golden of its coefficients
    (ns). Returns the committed file."""
    path = os.path.join(ROOT, "docs", "data", name)
    out = tmp_path / "f.json"
    assert C.main(["--stored", path, "--json", str(out)]) == 0
    err = capsys.readouterr().err.splitlines()
    with open(path) as f:
        committed = json.load(f)
    assert json.loads(out.read_text()) == committed
    for ln in lines:
        assert ln in err
    m = committed["sl_cost_model"]
    assert {k: round(v) for k, v in m.items() if k != "name"} == coefficients
    return committed


def test_f28_fit_is_deterministic_and_is_the_committed_default(tmp_path, capsys):
    """docs/data/cost-calibration-6.18-f28.json (kernel-findings F28): the
    experiments run again on an idle machine and the quietest of three
    agreement repetitions with the statistics kept current (f28+f28b+f28c,
    seeds 1-3); `calibrate --stored` of itself; the golden of the
    coefficients (ns); held out: seeds 4-5 14 of 18, the quietest of f28d
    and f28e 14 (refitted for F39's model). agree predicted with it by
    default until F31."""
    from swaplab.kernel import agree as A
    _check_stored_fit(tmp_path, capsys, "cost-calibration-6.18-f28.json", "f28", 15, 13, 14, {
        "fault_folio": 1519, "fault_page": 220, "fault_pmd_folio": 66400, "swpout_folio": 3367,
        "swpout_page": 2368, "swpin_folio": 3998, "swpin_page": 0, "split": 0, "scan_page": 17,
        "proc": 0, "op": 4795, "lock_wait": 3897})
    assert A.DEFAULT_COST != "docs/data/cost-calibration-6.18-f28.json"


def test_f31_fit_is_deterministic(tmp_path, capsys):
    """docs/data/cost-calibration-6.18-f31.json (kernel-findings F31): F28's
    experiments and the quietest of three agreement repetitions whose
    kernel side reads the group's statistics before every operation
    (f31+f31b+f31c, seeds 1-3; `--stat-flush 1`); `calibrate --stored` of
    itself; the golden of the coefficients (ns); trained 16 of 18, held
    out: seeds 4-5 14, the quietest of f31d and f31e 15 (refitted for
    F39's model). agree predicted with it by default until F34, and runs
    the kernel with --stat-flush 1."""
    from swaplab.kernel import agree as A
    _check_stored_fit(tmp_path, capsys, "cost-calibration-6.18-f31.json", "f31", 16, 13, 14, {
        "fault_folio": 1782, "fault_page": 130, "fault_pmd_folio": 131314, "swpout_folio": 3088,
        "swpout_page": 2391, "swpin_folio": 4390, "swpin_page": 0, "split": 0, "scan_page": 0,
        "proc": 0, "op": 4633, "lock_wait": 3719})
    assert A.DEFAULT_COST != "docs/data/cost-calibration-6.18-f31.json"
    for x in ("", "b", "c", "d", "e"):
        with open(os.path.join(ROOT, "docs", "data", f"reclaim-agreement-6.18-f31{x}.json")) as f:
            assert json.load(f)["stat_flush"] == 1


def test_rescoring_f31s_five_repetitions_on_their_means_with_their_fit(tmp_path, capsys):
    """`agree --rescore f31,...,f31e --counts mean --model-window 0,1` with
    F31's fit (the default until F34): two processes at once, sizes of 100 folios or
    more, swpout within 5 % in 15 settings of 18 and swap-ins within 10 % in
    14 (serially 8 and 10; before F38's model 15 / 17 and 9 / 10, before
    F39's 14 / 16 and 10 / 11, before F41's 14 / 15 and 9 / 11: these runs'
    driver was not pinned to the first CPU); system time within 15 % in 15."""
    from swaplab.kernel import agree as A
    paths = [os.path.join(ROOT, "docs", "data", f"reclaim-agreement-6.18-f31{x}.json")
             for x in ("", "b", "c", "d", "e")]
    out = tmp_path / "r.json"
    assert A.main([*SYS, "--cost", F31, "--rescore", ",".join(paths), "--counts", "mean",
                   "--model-window", "0,1", "--json", str(out)]) == 0
    assert capsys.readouterr().err.endswith(
        "model window 0, sizes of 100 folios or more: of 18 settings, swpout 15, swpin 14 met\n"
        "model window 1, sizes of 100 folios or more: of 18 settings, swpout 8, swpin 10 met\n"
        "system time within 15 %: 15 of 18 settings\n"
        "model window 0: of 18 settings, swpout 10, fallback 18, swpin 11, sys 15 met\n"
        "model window 1: of 18 settings, swpout 6, fallback 18, swpin 7, sys 13 met\n")


def test_rescoring_f28s_repetitions_with_their_fit(tmp_path, capsys):
    """`agree --rescore f28,f28b,f28c --model-window 1,0` with F28's fit (the
    default cost until F31): system time within 15 % in 15 of 18 settings; swpout within
    5 % in 6 (serial model) and 11 (two at once), swap-ins in 7 and 10."""
    from swaplab.kernel import agree as A
    paths = [os.path.join(ROOT, "docs", "data", f"reclaim-agreement-6.18-f28{x}.json") for x in ("", "b", "c")]
    out = tmp_path / "r.json"
    assert A.main([*SYS, "--rescore", ",".join(paths), "--cost",
                   os.path.join(ROOT, "docs", "data", "cost-calibration-6.18-f28.json"),
                   "--model-window", "1,0", "--json", str(out)]) == 0
    assert capsys.readouterr().err.endswith(
        "system time within 15 %: 15 of 18 settings\n"
        "model window 1: of 18 settings, swpout 6, fallback 18, swpin 7, sys 15 met\n"
        "model window 0: of 18 settings, swpout 11, fallback 18, swpin 10, sys 15 met\n")
    res = json.loads(out.read_text())
    assert all(not r.get("failed") for r in res["rows"])    # no OOM kill with current statistics


def test_rescoring_ten_repetitions_with_mean_counts(tmp_path, capsys):
    """kernel-findings F29: f28-f28e and f29-f29e (ten repetitions, the
    statistics kept current) with `--counts mean`: the kernel's counts of
    each setting and seed averaged over the ten, its system time the
    quietest's. Counting only sizes of 100 folios or more, two processes at
    once meets swpout in 13 of 18 settings and swap-ins in 15 (the
    quietest of f28-f28c: 14 and 12); serially 8 and 9 (before F38's
    model: 15 / 15, 13 / 16, 9 / 11; before F39's: 14 / 15, 14 / 15,
    10 / 11; before F41's: 14 / 14, 13 / 14, 10 / 10)."""
    from swaplab.kernel import agree as A
    g = os.path.join(ROOT, "docs", "data", "reclaim-agreement-6.18-")
    reps = [f"{g}f28{x}.json" for x in ("", "b", "c", "d", "e")] + [f"{g}f29{x}.json" for x in ("", "b", "c", "d", "e")]
    out = tmp_path / "r.json"
    assert A.main([*SYS, "--cost", F31, "--rescore", ",".join(reps), "--counts", "mean", "--model-window", "0,1",
                   "--json", str(out)]) == 0
    err = capsys.readouterr().err
    assert ("model window 0, sizes of 100 folios or more: of 18 settings, swpout 13, swpin 15 met\n"
            "model window 1, sizes of 100 folios or more: of 18 settings, swpout 8, swpin 9 met\n") in err
    res = json.loads(out.read_text())
    assert res["counts"] == "mean"
    row = next(r for r in res["rows"] if (r["workload"], r["size"], r["mthp"]) == ("usemem", "4x8M/16M", "all"))
    assert all(r["repetitions"] == 10 for r in row["runs"])
    s = row["model_windows"]["0"]["summary"]["sizes"]["4"]["swpout"]
    assert s["model"] == 356 and s["kernel"] == pytest.approx(337.94)
    assert A.main([*SYS, "--cost", F31, "--rescore", ",".join(reps[:3]), "--model-window", "0,1", "--json", str(out)]) == 0
    assert ("model window 0, sizes of 100 folios or more: of 18 settings, swpout 14, swpin 12 met\n"
            in capsys.readouterr().err)
    assert A.tally_large(json.loads(out.read_text()))["0"]["swpout"] == 14


def _agreement(window, rows):
    return {"schema": "swaplab.reclaim-agreement/1", "window": window, "rows": rows}


def _krun(seed, sys_s, swpout):
    return {"seed": seed, "kernel": {"sizes": {"4": {"swpout": swpout}}, "sys": sys_s, "predicted": 0.1}}


def test_quietest_takes_each_seeds_run_with_the_least_system_time():
    """Repetitions of one experiment: per setting and seed the run with the
    least system time, whole (its counts with it); a seed failed in one
    repetition comes from another; failed in all, it stays failed."""
    from swaplab.kernel import agree as A
    a = _agreement(None, [{"workload": "usemem", "size": "4x8M/16M", "mthp": "4K",
                           "failed": [{"seed": 2, "error": "oom"}], "runs": [_krun(1, 0.30, 10), _krun(3, 0.20, 30)]}])
    b = _agreement(None, [{"workload": "usemem", "size": "4x8M/16M", "mthp": "4K",
                           "failed": [], "runs": [_krun(1, 0.25, 11), _krun(2, 0.40, 22), _krun(3, 0.21, 31)]}])
    c = _agreement(None, [{"workload": "usemem", "size": "4x8M/16M", "mthp": "4K",
                           "failed": [{"seed": 2, "error": "oom again"}, {"seed": 3, "error": "oom"}],
                           "runs": [_krun(1, 0.50, 12)]}])
    q = A.quietest([a, b, c], ["a", "b", "c"])
    assert q["quietest_of"] == ["a", "b", "c"]
    row = q["rows"][0]
    assert [(r["seed"], r["kernel"]["sys"], r["kernel"]["sizes"]["4"]["swpout"]) for r in row["runs"]] == \
        [(1, 0.25, 11), (2, 0.40, 22), (3, 0.20, 30)]
    assert row["failed"] == [] and A.stored_seeds(row) == [1, 2, 3]
    d = _agreement(None, [{"workload": "usemem", "size": "4x8M/16M", "mthp": "4K",
                           "failed": [{"seed": 2, "error": "x"}], "runs": [_krun(1, 0.1, 1), _krun(3, 0.1, 3)]}])
    row = A.quietest([a, d], ["a", "d"])["rows"][0]
    assert row["failed"] == [{"seed": 2, "error": "x"}] and A.stored_seeds(row) == [1, 3]


def test_quietest_refuses_files_that_are_not_repetitions(tmp_path, capsys):
    from swaplab.kernel import agree as A
    from swaplab.params import ParamError
    one = _agreement(None, [{"workload": "usemem", "size": "4x8M/16M", "mthp": "4K", "failed": [],
                             "runs": [_krun(1, 0.3, 1)]}])
    two = _agreement(None, [{"workload": "usemem", "size": "4x8M/16M", "mthp": "4K", "failed": [],
                             "runs": [_krun(1, 0.3, 1), _krun(2, 0.3, 1)]}])
    with pytest.raises(ParamError, match=r"^--rescore 'b': usemem 4x8M/16M 4K has 2 seeds, another file 1$"):
        A.quietest([one, two], ["a", "b"])
    with pytest.raises(ParamError, match=r"^--rescore 'b': kernel window 1, 'a' None: not repetitions"):
        A.quietest([one, dict(one, window=1)], ["a", "b"])
    pa, pb = tmp_path / "a.json", tmp_path / "b.json"
    pa.write_text(json.dumps(one))
    pb.write_text("{}")
    out = tmp_path / "o.json"
    assert A.main([*SYS, "--cost", F31, "--rescore", f"{pa},{pb}", "--json", str(out)]) == 2
    assert capsys.readouterr().err == f"agree: error: --rescore '{pb}' is not a swaplab.reclaim-agreement/1 file\n"
    assert not out.exists()


def test_quietest_with_mean_counts_keeps_the_quietest_time_and_averages_the_counts(tmp_path, capsys):
    """--counts mean: per setting and seed the quietest run's system time,
    but every per-size count the mean over the repetitions of that seed
    that ran (a size missing from one counts 0 there); a seed failed in one
    repetition is averaged over the others (kernel-findings F29)."""
    from swaplab.kernel import agree as A
    from swaplab.params import ParamError

    def run(seed, sys_s, out4, out64=None):
        sizes = {"4": {"swpout": out4, "swpin": 2 * out4}}
        if out64 is not None:
            sizes["64"] = {"swpout": out64, "swpin": out64, "fallback_pct": 1.0}
        return {"seed": seed, "kernel": {"sizes": sizes, "sys": sys_s, "predicted": 0.1}}
    a = _agreement(None, [{"workload": "usemem", "size": "4x8M/16M", "mthp": "64K",
                           "failed": [{"seed": 2, "error": "oom"}], "runs": [run(1, 0.30, 10, 4), run(3, 0.20, 30)]}])
    b = _agreement(None, [{"workload": "usemem", "size": "4x8M/16M", "mthp": "64K",
                           "failed": [], "runs": [run(1, 0.25, 20), run(2, 0.40, 22), run(3, 0.21, 33, 2)]}])
    q = A.quietest([a, b], ["a", "b"], "mean")
    assert q["counts"] == "mean"
    got = [(r["seed"], r["kernel"]["sys"], r["repetitions"], r["kernel"]["sizes"]) for r in q["rows"][0]["runs"]]
    assert got == [(1, 0.25, 2, {"4": {"swpin": 30, "swpout": 15}, "64": {"fallback_pct": 0.5, "swpin": 2, "swpout": 2}}),
                   (2, 0.40, 1, {"4": {"swpin": 44, "swpout": 22}}),
                   (3, 0.20, 2, {"4": {"swpin": 63, "swpout": 31.5}, "64": {"fallback_pct": 0.5, "swpin": 1, "swpout": 1}})]
    # the default is the quietest run whole, as before
    assert A.quietest([a, b], ["a", "b"])["rows"][0]["runs"][0]["kernel"]["sizes"]["4"]["swpout"] == 20
    with pytest.raises(ParamError, match=r"^--counts 'median' is not one of quietest, mean$"):
        A.quietest([a, b], ["a", "b"], "median")
    pa = tmp_path / "a.json"
    pa.write_text(json.dumps(a))
    out = tmp_path / "o.json"
    assert A.main([*SYS, "--cost", F31, "--rescore", str(pa), "--counts", "mean", "--json", str(out)]) == 2
    assert capsys.readouterr().err == "agree: error: --counts mean needs several --rescore files (repetitions)\n"
    assert A.main([*SYS, "--cost", F31, "--rescore", f"{pa},{pa}", "--counts", "x", "--json", str(out)]) == 2
    assert capsys.readouterr().err == "agree: error: --counts 'x' is not one of quietest, mean\n"
    assert not out.exists()


def test_rescoring_repetitions_scores_their_quietest_runs(tmp_path, capsys):
    """`agree --rescore A,B,C`: the quiet calibration against the quietest
    of f25's three repetitions, every seed: 14 of 18 settings within 15 %
    in system time (the four builds with the least time miss)."""
    from swaplab.kernel import agree as A
    paths = [os.path.join(ROOT, "docs", "data", f"reclaim-agreement-6.18-f25{x}.json") for x in ("", "b", "c")]
    out = tmp_path / "r.json"
    assert A.main([*SYS, "--rescore", ",".join(paths), "--cost",
                   os.path.join(ROOT, "docs", "data", "cost-calibration-6.18-quiet.json"), "--json", str(out)]) == 0
    err = capsys.readouterr().err
    res = json.loads(out.read_text())
    assert res["rescored_from"] == ",".join(paths)
    assert A.sys_within(res) == (14, 18)
    assert err.endswith("system time within 15 %: 14 of 18 settings\n"
                        "model window 1: of 18 settings, swpout 7, fallback 18, swpin 7, sys 14 met\n")
    missed = [(r["workload"], r["size"], r["mthp"]) for r in res["rows"] if not r["targets_met"]["sys"]]
    assert missed == [("build", "j4/32M", "64K"), ("build", "j4/32M", "all"), ("build", "j4/64M", "64K"),
                      ("build", "j4/64M", "all")]


@pytest.mark.parametrize("args,msg", [
    (["--train", "a.json"], "--train and --heldout need --stored"),
    (["--stored", "X", "--train", "a.json:1,x"], "--train 'a.json:1,x': seeds must be a comma list of integers"),
    (["--stored", "X", "--heldout", "a.json++b.json"], "--heldout 'a.json++b.json': a file name is empty"),
])
def test_calibrate_refuses_bad_train_and_heldout(tmp_path, capsys, args, msg):
    out = tmp_path / "c.json"
    args = [os.path.join(ROOT, "docs", "data", "cost-calibration-6.18-quiet.json") if x == "X" else x for x in args]
    assert C.main([*args, "--json", str(out)]) == 2
    assert capsys.readouterr().err == f"calibrate: error: {msg}\n"
    assert not out.exists()


def test_rescoring_ten_stat_flush_1_repetitions_on_their_means(tmp_path, capsys):
    """F31: over the ten repetitions with `--stat-flush 1` (f31-f31j; the
    last five ran with agree's defaults and are in no fit), two processes
    at once, sizes of 100 folios or more: swpout within 5 % in 15 settings
    of 18 and swap-ins within 10 % in 15, as the ten with `--stat-flush 16`
    (f28-f29e) give 13 and 15 (before F38's model: 15 / 16 and 15 / 15,
    before F39's 14 and 15, before F41's 14 / 16 and 14 / 14); on
    the five outside the fit the default cost's prediction is within 15 %
    in 13."""
    from swaplab.kernel import agree as A
    g = os.path.join(ROOT, "docs", "data", "reclaim-agreement-6.18-f31")
    ten = ",".join(f"{g}{x}.json" for x in ("", "b", "c", "d", "e", "f", "g", "h", "i", "j"))
    last = ",".join(f"{g}{x}.json" for x in ("f", "g", "h", "i", "j"))
    out = tmp_path / "r.json"
    assert A.main([*SYS, "--cost", F31, "--rescore", ten, "--counts", "mean", "--model-window", "0",
                   "--json", str(out)]) == 0
    assert "model window 0, sizes of 100 folios or more: of 18 settings, swpout 15, swpin 15 met\n" \
        in capsys.readouterr().err
    assert A.main([*SYS, "--cost", F31, "--rescore", last, "--counts", "mean", "--model-window", "0",
                   "--json", str(out)]) == 0
    assert "system time within 15 %: 13 of 18 settings\n" in capsys.readouterr().err


F34 = [os.path.join(ROOT, "docs", "data", f"reclaim-agreement-6.18-f34{x}.json")
       for x in ("", "b", "c", "d", "e", "f", "g", "h")]


def test_f34_fit_of_user_and_system_time_is_deterministic_and_is_the_default(tmp_path, capsys):
    """docs/data/cost-calibration-6.18-f34.json (kernel-findings F34): F28's
    experiments and the quietest of three quiet agreement repetitions
    (f34f+f34g+f34h, seeds 1-3), fitted on user + system time; `calibrate
    --stored` of itself; the golden of its coefficients (ns). Within 15 %
    trained 15 of 18, held out: seeds 4-5 18, f34-f34c 16, f34d+f34e 15
    (refitted for F41's model).
    The same runs fitted on system time alone: 13 / 13 / 12 / 15. agree
    predicts with it, and measures user + system time, by default."""
    from swaplab.kernel import agree as A
    g = "reclaim-agreement-6.18-f34"
    quiet = "+".join(f"{g}{x}.json" for x in "fgh")
    t = "user + system time within 15 % in"
    committed = _check_fit_file(tmp_path, capsys, "cost-calibration-6.18-f34.json", [
        f"   train {quiet} seeds [1, 2, 3]: {t} 15 of 18",
        f" heldout {quiet} seeds [4, 5]: {t} 18 of 18",
        f" heldout {g}.json+{g}b.json+{g}c.json seeds all: {t} 16 of 18",
        f" heldout {g}d.json+{g}e.json seeds all: {t} 15 of 18"], {
        "fault_folio": 1662, "fault_page": 471, "fault_pmd_folio": 246138, "swpout_folio": 3594,
        "swpout_page": 1897, "swpin_folio": 4593, "swpin_page": 88, "split": 0, "scan_page": 0,
        "proc": 122642, "op": 5097, "lock_wait": 2033})
    assert committed["method"]["measured"] == "cpu"
    path = os.path.join(ROOT, "docs", "data", "cost-calibration-6.18-f34.json")
    out = tmp_path / "f.json"
    assert C.main(["--stored", path, "--measured", "sys", "--json", str(out)]) == 0
    assert [ln.rsplit(" in ", 1)[1] for ln in capsys.readouterr().err.splitlines()] == \
        ["13 of 18", "13 of 18", "12 of 18", "15 of 18"]
    assert A.DEFAULT_COST == "docs/data/cost-calibration-6.18-f34.json"
    assert A.DEFAULT_MEASURED == "cpu"


def test_rescoring_f34s_eight_repetitions_user_and_system_time(tmp_path, capsys):
    """F34: over the eight repetitions, with the default cost and measure
    (the F34 fit; user + system time), two processes at once: the
    prediction within 15 % in 17 settings of 18 (the one missed: build
    j4/64M with every size); sizes of 100 folios or more, swpout
    within 5 % in 15 and swap-ins within 10 % in 16 (F31's ten: 15 and 15;
    before F38's model 15 and 16, before F41's 14 and 16).
    The five it was not trained on alone: 17. F31's fit of system time
    alone on those five: 6."""
    from swaplab.kernel import agree as A
    out = tmp_path / "r.json"
    assert A.main(["--rescore", ",".join(F34), "--counts", "mean", "--model-window", "0,1",
                   "--json", str(out)]) == 0
    assert capsys.readouterr().err.endswith(
        "model window 0, sizes of 100 folios or more: of 18 settings, swpout 15, swpin 16 met\n"
        "model window 1, sizes of 100 folios or more: of 18 settings, swpout 8, swpin 10 met\n"
        "user + system time within 15 %: 17 of 18 settings\n"
        "model window 0: of 18 settings, swpout 11, fallback 18, swpin 11, sys 17 met\n"
        "model window 1: of 18 settings, swpout 6, fallback 18, swpin 7, sys 16 met\n")
    res = json.loads(out.read_text())
    assert res["measured"] == "cpu"
    assert [(r["workload"], r["size"], r["mthp"]) for r in res["rows"] if not r["targets_met"]["sys"]] == \
        [("build", "j4/64M", "all")]
    assert A.main(["--rescore", ",".join(F34[:5]), "--counts", "mean", "--model-window", "0",
                   "--json", str(out)]) == 0
    assert "user + system time within 15 %: 17 of 18 settings\n" in capsys.readouterr().err
    assert A.main([*SYS, "--cost", F31, "--rescore", ",".join(F34[:5]), "--counts", "mean",
                   "--model-window", "0", "--json", str(out)]) == 0
    assert "system time within 15 %: 6 of 18 settings\n" in capsys.readouterr().err


F36 = [os.path.join(ROOT, "docs", "data", f"reclaim-agreement-6.18-f36{x}.json") for x in ("", "b", "c", "d", "e")]


def _check_build_fit(tmp_path, capsys, committed, build, runs, name, n_fit, n_default, counts):
    """A fit made on one kernel build: its file names the build and user +
    system time; `agree --rescore` of that build's repetitions (`runs`,
    mean counts, two processes at once) predicts n_fit settings of 18
    within 15 % with it and n_default with the default fit, and meets the
    tallies `counts` (sizes of 100 folios or more) either way."""
    from swaplab.kernel import agree as A
    assert committed["kernel"] == build and committed["method"]["measured"] == "cpu"
    out = tmp_path / "r.json"
    for cost, n in ((os.path.join(ROOT, "docs", "data", name), n_fit), (os.path.join(ROOT, A.DEFAULT_COST), n_default)):
        assert A.main(["--rescore", ",".join(runs), "--counts", "mean", "--model-window", "0", "--cost", cost,
                       "--json", str(out)]) == 0
        err = capsys.readouterr().err
        assert f"user + system time within 15 %: {n} of 18 settings\n" in err
        assert f"model window 0, sizes of 100 folios or more: of 18 settings, {counts} met\n" in err


def test_f36_fit_of_another_kernel_build_reproduces_itself_and_predicts_its_runs(tmp_path, capsys):
    """docs/data/cost-calibration-6.18-f36.json (kernel-findings F36): the
    calibration experiments run again on kernel build 6.18.44-fc-v857 and
    the quietest of f36+f36b+f36c, seeds 1-3, user + system time; within
    15 % trained 14 of 18, held out seeds 4-5 17, f36d+f36e 16, and on
    F34's build's runs 12 and 12 (refitted for F41's model). Over the five repetitions on their mean
    counts, two processes at once: 16 of 18 with it, 11 with F34's fit
    (the default, made on build v669)."""
    g = "reclaim-agreement-6.18-f3"
    three = "+".join(f"{g}6{x}.json" for x in ("", "b", "c"))
    t = "user + system time within 15 % in"
    committed = _check_fit_file(tmp_path, capsys, "cost-calibration-6.18-f36.json", [
        f"   train {three} seeds [1, 2, 3]: {t} 14 of 18",
        f" heldout {three} seeds [4, 5]: {t} 17 of 18",
        f" heldout {g}6d.json+{g}6e.json seeds all: {t} 16 of 18",
        f" heldout {g}4f.json+{g}4g.json+{g}4h.json seeds all: {t} 12 of 18",
        f" heldout {g}4.json+{g}4b.json+{g}4c.json seeds all: {t} 12 of 18"], {
        "fault_folio": 925, "fault_page": 561, "fault_pmd_folio": 318286, "swpout_folio": 1113,
        "swpout_page": 1494, "swpin_folio": 1374, "swpin_page": 644, "split": 0, "scan_page": 0,
        "proc": 204402, "op": 3592, "lock_wait": 4637})
    _check_build_fit(tmp_path, capsys, committed, "6.18.44-fc-v857", F36, "cost-calibration-6.18-f36.json",
                     16, 11, "swpout 15, swpin 16")


F41 = [os.path.join(ROOT, "docs", "data", f"reclaim-agreement-6.18-f41fit{x}.json") for x in ("", "b", "c", "d", "e")]


def test_f41_fit_of_kernel_build_v1252_reproduces_itself_and_predicts_its_runs(tmp_path, capsys):
    """docs/data/cost-calibration-6.18-f41.json (docs/cost-calibration.md,
    "The F41 fit"): F36's recipe on build 6.18.44-fc-v1252 with the driver
    pinned to the run's first CPU; within 15 % trained 14 of 18, held out
    seeds 4-5 16, f41fitd+f41fite 15, and on F36's and F34's builds' runs 3
    and 5. Over the five repetitions on their mean counts, two processes at
    once: 17 of 18 with it, 9 with F34's fit (the default); swpout within
    5 % in 14 settings, swap-ins within 10 % in 17 (sizes of 100 folios or
    more)."""
    g = "reclaim-agreement-6.18-f"
    three = "+".join(f"{g}41fit{x}.json" for x in ("", "b", "c"))
    t = "user + system time within 15 % in"
    committed = _check_fit_file(tmp_path, capsys, "cost-calibration-6.18-f41.json", [
        f"   train {three} seeds [1, 2, 3]: {t} 14 of 18",
        f" heldout {three} seeds [4, 5]: {t} 16 of 18",
        f" heldout {g}41fitd.json+{g}41fite.json seeds all: {t} 15 of 18",
        f" heldout {g}36d.json+{g}36e.json seeds all: {t} 3 of 18",
        f" heldout {g}34f.json+{g}34g.json+{g}34h.json seeds all: {t} 5 of 18"], {
        "fault_folio": 1601, "fault_page": 570, "fault_pmd_folio": 434261, "swpout_folio": 4731,
        "swpout_page": 1061, "swpin_folio": 0, "swpin_page": 2652, "split": 0, "scan_page": 37,
        "proc": 292598, "op": 4895, "lock_wait": 5186})
    _check_build_fit(tmp_path, capsys, committed, "6.18.44-fc-v1252", F41, "cost-calibration-6.18-f41.json",
                     17, 9, "swpout 14, swpin 17")


def test_agree_notes_a_calibration_made_on_another_kernel_build():
    from swaplab.kernel import agree as A
    path = os.path.join(ROOT, A.DEFAULT_COST)
    assert A.calibration_note(path, "6.18.44-fc-v669") is None
    assert A.calibration_note(path, "6.18.44-fc-v857") == (
        f"note: the cost calibration {path} was measured on kernel 6.18.44-fc-v669, this is 6.18.44-fc-v857: "
        "the predicted times may be off; fit this machine's with python -m swaplab.kernel.calibrate "
        "(docs/cost-calibration.md) and pass it with --cost")


@pytest.mark.parametrize("args, msg", [
    (["--rescore", os.path.join(ROOT, "docs", "data", "reclaim-agreement-6.18-f31.json")],
     "agree: error: --rescore '{}': no user time stored (an agreement file before kernel-findings F34); "
     "--measured cpu needs it, --measured sys does not\n"),
    (["--measured", "wall", "--rescore", F34[0]], "agree: error: --measured 'wall' is not one of cpu, sys\n"),
])
def test_agree_measured_refusals(tmp_path, capsys, args, msg):
    from swaplab.kernel import agree as A
    out = tmp_path / "r.json"
    assert A.main([*args, "--json", str(out)]) == 2
    where = args[args.index("--rescore") + 1]
    assert capsys.readouterr().err == msg.format(where)
    assert not out.exists()


def test_calibrate_measured_refusals(tmp_path, capsys):
    out = tmp_path / "c.json"
    assert C.main(["--measured", "cpu", "--json", str(out)]) == 2
    assert capsys.readouterr().err == "calibrate: error: --measured needs --stored (the runs record both times)\n"
    path = os.path.join(ROOT, "docs", "data", "cost-calibration-6.18-f34.json")
    assert C.main(["--stored", path, "--measured", "wall", "--json", str(out)]) == 2
    assert capsys.readouterr().err == "calibrate: error: --measured 'wall' is not one of cpu, sys\n"
    assert not out.exists()


def test_rescoring_f37s_serial_run_with_the_kernels_shrink_lruvec_loop(tmp_path, capsys):
    """kernel-findings F39: F37's serial kernel run (model window 1),
    re-scored; sizes of 100 folios or more met swpout in 17 settings of
    18 and swap-ins in 17 with F39's model (F38's, which deactivated the
    whole active target: 16 and 17). F41's model, whose harness driver
    sits on the first CPU (these runs' did not), meets 14 and 15;
    pmbench 2x24M with every size, 64K: 330.6 swap-outs against the
    kernel's 305.8 (F39's 316.4; before it 328.4)."""
    from swaplab.kernel import agree as A
    out = tmp_path / "r.json"
    path = os.path.join(ROOT, "docs", "data", "reclaim-agreement-6.18-f37-window1.json")
    assert A.main(["--rescore", path, "--model-window", "1", "--json", str(out)]) == 0
    assert "model window 1, sizes of 100 folios or more: of 18 settings, swpout 14, swpin 15 met\n" \
        in capsys.readouterr().err
    res = json.loads(out.read_text())
    row = next(r for r in res["rows"] if (r["workload"], r["size"], r["mthp"]) == ("pmbench", "2x24M/32M", "all"))
    s = row["model_windows"]["1"]["summary"]["sizes"]["64"]["swpout"]
    assert (s["model"], s["kernel"]) == (330.6, 305.8)
    with open(os.path.join(ROOT, "docs", "data", "reclaim-agreement-6.18-f41-f37rescored.json")) as f:
        assert json.load(f)["rows"] == res["rows"]
