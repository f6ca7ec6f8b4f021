"""swaplab bench threads: JSON, plot, lock statistics, refusals."""
import importlib.util
import json
import xml.etree.ElementTree as ET

from swaplab import _core

SVG = "{http://www.w3.org/2000/svg}"


def test_bench_threads_json_and_plot(cli, tmp_path):
    out, svg = tmp_path / "t.json", tmp_path / "t.svg"
    plot = ["--plot", str(svg)] if importlib.util.find_spec("matplotlib") else []
    cli("bench", "threads", "--policy", "linux-6.12,linux-6.18", "--threads", "1,2", "--orders", "0",
        "--fill", "50", "--size", "64M", "--ops", "20000", "--json", str(out), *plot, check=True)
    b = json.loads(out.read_text())
    assert b["bench"] == "threads" and b["victims"] == "any"
    rows = b["results"]
    assert [(r["policy"], r["threads"]) for r in rows] == [("linux-6.12", 1), ("linux-6.12", 2),
                                                          ("linux-6.18", 1), ("linux-6.18", 2)]
    for r in rows:
        assert r["ops_per_sec"] > 0 and r["lat_p50_ns"] <= r["lat_p99_ns"] <= r["lat_max_ns"]
        assert set(r["locks"]) == {"device", "cluster", "local", "global_cluster", "slot_cache"}
    one = rows[0]
    assert one["scaling"] == 1.0 and one["locks"]["device"]["contended"] == 0
    # 6.12 allocates order 0 in batches of 64 under the device lock
    assert one["locks"]["device"]["acquisitions"] * 60 < 20000 * 2
    assert rows[2]["locks"]["local"]["acquisitions"] == 20000
    assert {t["target"].split(":")[0] for t in b["targets"]} >= {"linux-6.18 order-0 churn at 50 % fill"}
    if importlib.util.find_spec("matplotlib"):
        # speedup lines: the legend names both policies' series and the ideal line
        text = " ".join("".join(t.itertext()) for t in ET.parse(svg).getroot().iter(f"{SVG}text"))
        assert "linux-6.12 order 0 50% fill" in text and "linux-6.18 order 0 50% fill" in text
        assert "ideal" in text


def test_one_thread_with_locks_equals_deterministic():
    for pol in [p["name"] for p in _core.policies() if p["concurrent"]]:
        a = _core.bench_threads(pol, 16384, 1, 0.6, [0, 0, 4], 5000, 3)
        b = _core.bench_threads(pol, 16384, 1, 0.6, [0, 0, 4], 5000, 3, concurrent=False)
        assert a["map_hash"] == b["map_hash"]
        assert a["alloc_ok"] == b["alloc_ok"] and a["alloc_fail"] == b["alloc_fail"]


def test_bench_threads_refusals(cli):
    p = cli("bench", "threads", "--policy", "buddy")
    assert p.returncode == 2
    assert p.stderr.strip() == ("swaplab bench: error: policy buddy has no concurrent mode (those that do: "
                                "linux-6.12, linux-6.15, linux-6.18, proposal-reuse, proposal-reserve, "
                                "proposal-retag, proposal-holes, proposal-holes-first, proposal-compact, "
                                "proposal-kcompact)")
    p = cli("bench", "threads", "--plot", "/tmp/x.gif")
    assert p.returncode == 2 and p.stderr.strip() == ("swaplab bench: error: --plot '/tmp/x.gif' must end in "
                                                      ".png, .svg or .pdf")
    p = cli("bench", "threads", "--threads", "0")
    assert p.returncode == 2 and p.stderr.strip() == "swaplab bench: error: --threads 0 is outside 1..256"
