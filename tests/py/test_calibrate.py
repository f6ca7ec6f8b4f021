"""The cost calibration's arithmetic (python -m swaplab.kernel.calibrate):
event counts from a run's counters, and the fit. The runs themselves are
live (docs/cost-calibration.md); nothing here touches the machine."""
import json
import os
import random

import pytest

from swaplab.kernel import calibrate as C
from conftest import ROOT

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
        "op": 387, "lock": (400 + 1 + 100 + 300 + 50) * 0.25}


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
    swap event is contended; the prediction is 0.238 s against 0.260 s
    measured, where the terms without operations and contention give
    0.124 s."""
    from swaplab.kernel import reclaim as R
    cost = _calibration()["sl_cost_model"]
    with open(os.path.join(ROOT, "docs", "data", "f12", "usemem-4x16M-32M-64K-cpus2.json")) as f:
        res = json.load(f)
    st = R.stream_counts(res["params"])
    assert st == {"ops": 524, "procs": 4, "contended": 1.0}
    assert R.predict_sys(cost, res, st) == pytest.approx(0.238267, abs=1e-6)
    bare = R.predict_sys(cost, res, {"ops": 0, "procs": 0, "contended": 0.0})
    assert bare == pytest.approx(0.1235, abs=1e-4)
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
    assert all(v >= 0 for v in cal["coefficients"].values())
    for r in cal["runs"]:
        assert r["features"] == C.features(r["raw"])
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


@pytest.mark.parametrize("args,msg", [
    (["--mthp", "64K,32K"], "unknown --mthp setting '32K' (known: 4K, 64K, all)"),
    (["--window", "-1"], "--window -1 is negative"),
])
def test_agreement_refuses_bad_options(tmp_path, capsys, args, msg):
    from swaplab.kernel import agree as A
    out = tmp_path / "a.json"
    assert A.main([*args, "--json", str(out)]) == 2
    assert capsys.readouterr().err == f"agree: error: {msg}\n"
    assert not out.exists()


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
    assert A.main(["--rescore", str(src), "--model-window", "1,0", "--json", str(out)]) == 0
    res = json.loads(out.read_text())
    assert res["rescored_from"] == str(src) and res["model_windows"] == [1, 0]
    row = res["rows"][0]
    got = {w: row["model_windows"][w]["summary"]["sizes"]["4"]["swpout"] for w in ("1", "0")}
    assert got == {"1": {"model": 4016, "kernel": 3600, "rel": pytest.approx(416 / 3600)},
                   "0": {"model": 3859, "kernel": 3600, "rel": pytest.approx(259 / 3600)}}
    assert row["summary"] == row["model_windows"]["1"]["summary"]
    assert row["runs"][0]["models"]["0"]["runner"]["window"] == 4
    assert res["rows"][1] == {"workload": "pmbench", "size": "2x12M/16M", "mthp": "all",
                              "failed": [{"seed": 1, "error": "x"}]}
    capsys.readouterr()
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    assert A.main(["--rescore", str(bad), "--json", str(tmp_path / "o.json")]) == 2
    assert capsys.readouterr().err == f"agree: error: --rescore file '{bad}' is not an agreement result\n"
