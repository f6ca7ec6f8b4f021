"""swaplab plot (matplotlib): every picture from its input, and refusals."""
import importlib.util
import xml.etree.ElementTree as ET

import pytest

pytestmark = pytest.mark.skipif(importlib.util.find_spec("matplotlib") is None,
                                reason="matplotlib is not installed (the [plot] extra)")
SVG = "{http://www.w3.org/2000/svg}"


def _text(path):
    return " ".join("".join(t.itertext()) for t in ET.parse(path).getroot().iter(f"{SVG}text"))


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    from conftest import run_cli
    d = tmp_path_factory.mktemp("runs")
    for pol in ("linux-6.9", "linux-6.18"):
        run_cli("run", "thp-swap", "--mthp", "16K,64K", "--policy", pol, "--iterations", "6", "--metrics",
                "-q", "--json", str(d / f"{pol}.json"), "--layout-dump", str(d / f"{pol}.bin"), check=True)
    return d


def test_fallback_lines_and_no_data_gaps(cli, runs, tmp_path):
    out = tmp_path / "f.svg"
    cli("plot", str(runs / "linux-6.9.json"), str(runs / "linux-6.18.json"), "-o", str(out), check=True)
    t = _text(out)
    assert "model:linux-6.9 (mean 100.0%)" in t and "model:linux-6.18 (mean 0.0%)" in t
    # 16K never swaps out in thp-swap: no data, not 0 %
    assert "model:linux-6.18 (no data)" in t and "0/0, no data" in t


def test_cluster_map_and_slot_map(cli, runs, tmp_path):
    res = str(runs / "linux-6.18.json")
    cli("plot", res, "--kind", "clusters", "-o", str(tmp_path / "c.svg"), check=True)
    t = _text(tmp_path / "c.svg")
    assert "cluster states per iteration" in t and "full, order 4" in t and "free" in t
    cli("plot", res, "--kind", "slots", "--layout", str(runs / "linux-6.18.bin"), "-o",
        str(tmp_path / "s.png"), check=True)
    assert (tmp_path / "s.png").read_bytes()[:4] == b"\x89PNG"


def test_sweep_heatmap(cli, tmp_path):
    cli("sweep", "-q", "-o", str(tmp_path / "s"), "--policy", "linux-6.9,linux-6.18", "--seed", "1-2",
        "-s", "--swap-size", "64M,128M", "--iterations", "4", check=True)
    cli("plot", str(tmp_path / "s"), "-o", str(tmp_path / "h.svg"), check=True)
    t = _text(tmp_path / "h.svg")
    assert "linux-6.9" in t and "swap_size=128M" in t and "mean over 2 seeds" in t


@pytest.mark.parametrize("args,line", [
    (["RUN", "-o", "OUT/x.gif"], "swaplab plot: error: -o 'OUT/x.gif' must end in .png, .svg or .pdf"),
    (["RUN", "--kind", "heatmap", "-o", "OUT/x.png"],
     "swaplab plot: error: --kind heatmap does not draw a result (it draws: fallback, clusters, slots)"),
    (["RUN", "--kind", "slots", "-o", "OUT/x.png"],
     "swaplab plot: error: --kind slots needs --layout (the run's --layout-dump)"),
    (["OUT/nope.json", "-o", "OUT/x.png"], "swaplab plot: error: cannot read plot input 'OUT/nope.json': No such file or directory"),
])
def test_refusals_one_line(cli, runs, tmp_path, args, line):
    args = [a.replace("RUN", str(runs / "linux-6.18.json")).replace("OUT", str(tmp_path)) for a in args]
    p = cli("plot", *args)
    assert p.returncode == 2 and p.stderr == line.replace("OUT", str(tmp_path)) + "\n"
    assert not (tmp_path / "x.png").exists()


def test_cluster_map_needs_metrics(cli, tmp_path):
    cli("run", "thp-swap-v1", "--iterations", "2", "-q", "--json", str(tmp_path / "r.json"), check=True)
    p = cli("plot", str(tmp_path / "r.json"), "--kind", "clusters", "-o", str(tmp_path / "c.png"))
    assert p.returncode == 2 and "needs a model result run with --metrics" in p.stderr
