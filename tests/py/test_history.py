"""swaplab history: one row per policy, the JSON rows and series, the chart
(matplotlib), and bad input (one line, exit 2, nothing written)."""
import importlib.util
import json
import xml.etree.ElementTree as ET

import pytest

from swaplab import _core
from swaplab.model import run_model
from swaplab.params import WorkloadParams

POLICIES = [p["name"] for p in _core.policies()]
SVG = "{http://www.w3.org/2000/svg}"
HAVE_MPL = importlib.util.find_spec("matplotlib") is not None


def test_one_row_per_policy_in_registry_order(cli):
    p = cli("history", "thp-swap-v1", "-s", "--iterations", "3", check=True)
    lines = p.stdout.splitlines()
    assert lines[0] == ("# history thp-swap-v1, zram swap 64M, mTHP 64K, -s, seed 1, rng default, cpu 0, "
                        "3 iterations")
    assert lines[1].split() == ["policy", "64K", "mean%", "64K", "max%", "64K", "last10%", "order0",
                                "fail", "time", "ms"]
    assert [ln.split()[0] for ln in lines[2:]] == POLICIES
    for ln in lines[2:]:
        assert len(ln.split()) == 6
    # progress goes to stderr, one line per policy
    prog = [ln for ln in p.stderr.splitlines() if ln.startswith("history: [")]
    assert len(prog) == len(POLICIES)


def test_json_rows_and_series_match_single_runs(cli, tmp_path):
    out = tmp_path / "h.json"
    cli("history", "thp-swap", "--mthp", "16K,64K", "--iterations", "4", "--json", str(out), check=True)
    h = json.loads(out.read_text())
    assert h["schema"] == "swaplab.history/1"
    assert h["workload"] == "thp-swap" and h["sizes_kb"] == [16, 64] and h["iterations"] == 4
    assert h["policies"] == POLICIES
    assert [r["policy"] for r in h["rows"]] == POLICIES
    kernels = {p["name"]: p["kernel"] for p in _core.policies()}
    for r in h["rows"]:
        res, _ = run_model(WorkloadParams(workload="thp-swap", mthp_kb=[16, 64], iterations=4), r["policy"])
        assert r["kernel"] == kernels[r["policy"]]
        assert set(r["series"]) == {"16", "64"}
        for kb in ("16", "64"):
            assert r["series"][kb] == [it["sizes"][kb]["fallback_pct"]
                                       if it["sizes"][kb]["swpout"] + it["sizes"][kb]["swpout_fallback"]
                                       else None for it in res["iterations"]]
            assert r["summary"][kb] == res["summary"][kb]
        assert r["order0_alloc_fail"] == sum(it["order0"]["alloc_fail"] for it in res["iterations"])
        assert r["layout_hash"] == res["layout"]["hash"]
        assert r["seconds"] > 0


def test_policies_option_selects_and_orders(cli, tmp_path):
    out = tmp_path / "h.json"
    p = cli("history", "thp-swap-v1", "--iterations", "2", "--policies", "first-fit,linux-6.18",
            "--json", str(out), check=True)
    assert [ln.split()[0] for ln in p.stdout.splitlines()[2:]] == ["first-fit", "linux-6.18"]
    assert [r["policy"] for r in json.loads(out.read_text())["rows"]] == ["first-fit", "linux-6.18"]


def test_json_to_stdout_prints_no_table(cli):
    p = cli("history", "thp-swap-v1", "--iterations", "1", "--policies", "buddy", "--json", "-", check=True)
    assert json.loads(p.stdout)["rows"][0]["policy"] == "buddy"


def test_every_policy_models_every_device_kind():
    from swaplab.history import refusals
    from swaplab.params import DEVICE_KINDS
    for kind in DEVICE_KINDS:
        wp = WorkloadParams(workload="thp-swap-v1", device=kind, iterations=1)
        assert refusals(wp, POLICIES) == {}, kind


def test_a_policy_that_refuses_is_skipped_or_bad_input(monkeypatch, capsys):
    """A policy that cannot run the parameters: skipped with the reason among
    all policies; named in --policies: bad input (no policy refuses a device
    kind today, so the core's refusal is stood in for)."""
    from swaplab import history
    from swaplab.params import ParamError
    real = history._core.validate

    def validate(policy, **kw):
        if policy == "linux-6.10":
            raise ValueError("policy linux-6.10 does not model this device kind (hdd)")
        return real(policy=policy, **kw)

    monkeypatch.setattr(history._core, "validate", validate)
    wp = WorkloadParams(workload="thp-swap-v1", device="hdd", iterations=1)
    run, skipped = history.select_policies(wp, POLICIES, explicit=False)
    assert run == [p for p in POLICIES if p != "linux-6.10"]
    assert skipped == {"linux-6.10": "policy linux-6.10 does not model this device kind (hdd)"}
    h = history.run_history(wp, run, skipped=skipped)
    assert h["skipped"] == [{"policy": "linux-6.10",
                             "reason": "policy linux-6.10 does not model this device kind (hdd)"}]
    with pytest.raises(ParamError, match="linux-6.10 does not model"):
        history.select_policies(wp, ["buddy", "linux-6.10"], explicit=True)


needs_mpl = pytest.mark.skipif(not HAVE_MPL, reason="matplotlib is not installed (the [plot] extra)")


@needs_mpl
def test_svg_names_every_policy_and_the_workload(cli, tmp_path):
    out = tmp_path / "h.svg"
    cli("history", "thp-swap-v1", "-s", "--iterations", "12", "--plot", str(out), check=True)
    root = ET.parse(out).getroot()
    assert root.tag == f"{SVG}svg"
    text = " ".join("".join(t.itertext()) for t in root.iter(f"{SVG}text"))
    assert "thp-swap-v1" in text and "-s" in text and "12 iterations" in text
    assert "iteration" in text and "fallback %" in text
    for pol in POLICIES:                                             # the legend names each
        assert pol in text


@needs_mpl
def test_png_and_pdf_with_matplotlib(cli, tmp_path):
    out = tmp_path / "h.png"
    cli("history", "thp-swap-v1", "--iterations", "2", "--policy", "buddy", "--plot", str(out), check=True)
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    out = tmp_path / "h.pdf"
    cli("history", "thp-swap-v1", "--iterations", "2", "--policy", "buddy", "--plot", str(out), check=True)
    assert out.read_bytes()[:5] == b"%PDF-"


def test_series_hold_none_where_nothing_was_swapped_out(cli):
    # thp-swap with 16K enabled never faults 16K folios: 0/0 each iteration
    p = cli("history", "thp-swap", "--mthp", "16K,64K", "--iterations", "3", "--policy", "linux-6.18",
            "--json", "-", check=True)
    row = json.loads(p.stdout)["rows"][0]
    assert row["series"]["16"] == [None, None, None]
    assert all(v is not None for v in row["series"]["64"])


KNOWN = ", ".join(POLICIES)
BAD = [
    (["history", "thp-swap-v1", "--policies", "linux-6.18,nope"],
     f"swaplab history: error: unknown policy 'nope' (known: {KNOWN})"),
    (["history", "thp-swap-v1", "--policy", "buddy,,first-fit"],
     "swaplab history: error: --policy 'buddy,,first-fit' has an empty name"),
    (["history", "thp-swap-v1", "--policy", "buddy", "--policy", "buddy"],
     "swaplab history: error: --policy names buddy twice"),
    (["history", "thp-swap-v1", "--plot", "OUT/h.gif"],
     "swaplab history: error: --plot 'OUT/h.gif' must end in .png, .svg or .pdf"),
    (["history", "thp-swap-v1", "--plot", "OUT/h"],
     "swaplab history: error: --plot 'OUT/h' must end in .png, .svg or .pdf"),
    (["history", "thp-swap-v1", "--plot", "/nonexistent/dir/h.svg"],
     "swaplab history: error: cannot write --plot '/nonexistent/dir/h.svg': directory /nonexistent/dir "
     "does not exist"),
    (["history", "thp-swap-v1", "--json", "/nonexistent/dir/h.json"],
     "swaplab history: error: cannot write --json '/nonexistent/dir/h.json': directory /nonexistent/dir "
     "does not exist"),
    (["history", "nope"], "swaplab history: error: unknown workload 'nope' (known: thp-swap-v1, thp-swap)"),
    (["history", "thp-swap-v1", "--mthp", "48K"], "swaplab history: error: mTHP size 48K is not a power of two"),
    (["history", "thp-swap-v1", "--policy", "buddy", "--bogus"], "swaplab: error: unrecognized arguments: --bogus"),
]


@pytest.mark.parametrize("args,line", BAD, ids=[" ".join(a) for a, _ in BAD])
def test_bad_input_one_line_exit_2(cli, tmp_path, args, line):
    args = [a.replace("OUT", str(tmp_path)) for a in args]
    p = cli(*args, "--iterations", "1")
    assert p.returncode == 2, p.stderr
    assert p.stderr.splitlines() == [line.replace("OUT", str(tmp_path))]
    assert p.stdout == ""
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(HAVE_MPL, reason="matplotlib is installed: plots are drawn")
def test_plot_without_matplotlib_is_refused(cli, tmp_path):
    out = tmp_path / "h.svg"
    p = cli("history", "thp-swap-v1", "--plot", str(out))
    assert p.returncode == 2
    assert p.stderr.splitlines() == ["swaplab history: error: plots need matplotlib, which is not "
                                     "installed (pip install 'swaplab[plot]')"]
    assert p.stdout == "" and list(tmp_path.iterdir()) == []


def test_help(cli):
    p = cli("history", "--help")
    assert p.returncode == 0 and p.stdout.startswith("usage: swaplab history")
    assert "--policy" in p.stdout and "--plot" in p.stdout


def test_plot_refused_when_matplotlib_is_missing(monkeypatch, capsys, tmp_path):
    """Without matplotlib (the [plot] extra), every plot option refuses in one line."""
    import sys
    from swaplab import cli
    monkeypatch.setitem(sys.modules, "matplotlib", None)   # import matplotlib raises ImportError
    for argv in (["history", "thp-swap-v1", "--iterations", "1", "--plot", str(tmp_path / "h.svg")],
                 ["plot", str(tmp_path / "r.json"), "-o", str(tmp_path / "p.png")]):
        assert cli.main(argv) == 2
        assert capsys.readouterr().err == (f"swaplab {argv[0]}: error: plots need matplotlib, which is not "
                                          "installed (pip install 'swaplab[plot]')\n")
    assert list(tmp_path.iterdir()) == []
