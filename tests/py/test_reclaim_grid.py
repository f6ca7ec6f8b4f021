"""docs/proposals/reclaim_grid.py: issue 11's grid on the reclaim-driven
workloads, judged by make_grid.py's assess(). One cell, two seeds."""
import importlib.util
import json
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _grid():
    spec = importlib.util.spec_from_file_location("reclaim_grid",
                                                  os.path.join(ROOT, "docs", "proposals", "reclaim_grid.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_one_cell_assessment_is_pinned(tmp_path):
    g = _grid()
    js, md = tmp_path / "g.json", tmp_path / "g.md"
    assert g.main(["-j", "1", "--seeds", "2", "--workload", "pmbench-uniform", "--mthp", "32K,64K,128K",
                   "--fill", "97", "--policy", "linux-6.18,first-fit,noncontig,proposal-holes-first,proposal-compact",
                   "--json", str(js), "--md", str(md)]) == 0
    d = json.loads(js.read_text())
    # the device is the calibration run's peak / 97 %, rounded up to 64 KiB
    assert d["devices"] == {"pmbench-uniform 32K,64K,128K 97 % seed 1": {"peak_pages": 15561, "swap_bytes": 65732608},
                            "pmbench-uniform 32K,64K,128K 97 % seed 2": {"peak_pages": 15559, "swap_bytes": 65732608}}
    got = {r["size_kb"]: (r["fallback_pct"], r["folios"]["linux-6.18"]) for r in d["rows"]}
    assert got == {
        32: ({"linux-6.18": 64.588, "first-fit": 22.873, "noncontig": 0.0, "proposal-holes-first": 20.13,
              "proposal-compact": 4.148}, 1252.5),
        64: ({"linux-6.18": 58.187, "first-fit": 34.949, "noncontig": 0.0, "proposal-holes-first": 32.343,
              "proposal-compact": 9.735}, 717.5),
        128: ({"linux-6.18": 5.345, "first-fit": 10.351, "noncontig": 0.0, "proposal-holes-first": 6.929,
               "proposal-compact": 3.541}, 271.0)}
    # 6.18's fallbacks mostly came with an aligned free run on the device,
    # the others' (almost) never; compact moves entries under reclaim
    assert [r["fallback_aligned_pct"]["linux-6.18"] for r in d["rows"]] == [49.336, 37.635, 0.182]
    assert [r["fallback_aligned_pct"]["proposal-holes-first"] for r in d["rows"]] == [0.0, 0.06, 0.0]
    assert all(r["fallback_aligned_pct"][p] == 0.0 for r in d["rows"] for p in ("first-fit", "proposal-compact"))
    # revision 4 (half a 16K-64K window may move): 241.5 moves a run before,
    # 32K 17.6 %, 64K 31.0 %, 128K 3.2 %
    assert d["rows"][0]["moves"] == {"proposal-holes-first": 0.0, "proposal-compact": 4384.5}
    assert d["rows"][0]["predicted_sys_seconds"]["linux-6.18"] == 28.9974
    assert all(r["order0_fail"] == dict.fromkeys(d["policies"], 0.0) for r in d["rows"])
    assert d["targets"] == {p: {
        "target_pairs": 2, "met_90": m, "missed_90": {"space": 0, "contiguity": 2 - m, "placement": 0}, "pairs": 3,
        "worse_than_6.18": w, "more_order0_failures": 0, "above_first_fit": 0}
        for p, m, w in (("proposal-holes-first", 0, 1), ("proposal-compact", 1, 0))}
    text = md.read_text()
    assert "| proposal-holes-first | 3 | 2 | 0 | 0 | 2 | 0 | 1 | 0 | 0 |" in text
    assert "| proposal-compact | 3 | 2 | 1 | 0 | 1 | 0 | 0 | 0 | 0 |" in text
    assert "* pmbench-uniform 32K, 64K, 128K at 97 %: 128K (271 folios/run under 6.18): 5.3 / 6.9" in text


def test_bad_arguments_are_refused_in_one_line(tmp_path, capsys):
    g = _grid()
    out = ["--json", str(tmp_path / "g.json"), "--md", str(tmp_path / "g.md")]
    for args, msg in ((["--fill", "120"], "--fill 120 is outside 50..99"),
                      (["--workload", "usemem"], "unknown workload 'usemem' (known: pmbench-uniform, pmbench-zipf, "
                                                 "usemem-reread, build)"),
                      (["--policy", "linux-6.18,noncontig"], "--policy must include first-fit (the targets are "
                                                             "judged against it)")):
        assert g.main(args + out) == 2
        assert capsys.readouterr().err == f"reclaim_grid.py: {msg}\n"
    assert list(tmp_path.iterdir()) == []
