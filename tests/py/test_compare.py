"""swaplab compare on hand-made result files: agreement, divergence at a known
iteration (counts, hash), slot agreement from layout dumps, and refusals
(mismatched workloads or parameters, layouts that do not belong)."""
import json
import pathlib
import struct

import pytest

from swaplab import _core
from swaplab.params import WorkloadParams
from swaplab.results import build_result

NOT_SWAPPED = 0xFFFFFFFFFFFFFFFF
NPAGES = 64


def layout_bytes(slots):
    return struct.pack(f"<{len(slots)}Q", *slots)


def base_layout():
    # pages 0..47 swapped to slots 512.., the rest resident
    return [512 + i if i < 48 else NOT_SWAPPED for i in range(NPAGES)]


def raw_iters(n, fallback_at=None, hash_at=None, other_at=None):
    """Per-iteration raw records; fallback_at: iteration (1-based) from which
    3 of the 64K folios fall back; hash_at: iteration from which the layout
    hash differs."""
    out = []
    for i in range(1, n + 1):
        so = [0] * 10
        fb = [0] * 10
        si = [0] * 10
        so[4] = 200 + i
        if fallback_at is not None and i == fallback_at:
            so[4] -= 3
            fb[4] = 3
        h = 1000 + i
        if hash_at is not None and i >= hash_at:
            h += 7777
        other = 1 if other_at is not None and i >= other_at else 0
        out.append({"swpout": so, "swpout_fallback": fb, "swpin": si, "alloc_fail0": 0,
                    "layout_hash": h, "inuse_pages": 100 * i + other, "swapped_pages": 100 * i})
    return out


def make(tmp_path, name, *, source="model", policy="linux-6.18", workload="thp-swap-v1", iterations=4,
         small=False, layout=None, **kw):
    wp = WorkloadParams(workload=workload, iterations=iterations, small_folios=small)
    lay = layout_bytes(layout or base_layout())
    res = build_result(source, policy, wp, raw_iters(iterations, **kw), npages=NPAGES,
                       final_hash=_core.layout_hash(lay), seconds=0.01)
    p = tmp_path / f"{name}.json"
    p.write_text(json.dumps(res))
    lp = tmp_path / f"{name}.bin"
    lp.write_bytes(lay)
    return str(p), str(lp)


def test_agreement(cli, tmp_path):
    a, la = make(tmp_path, "a")
    b, lb = make(tmp_path, "b", source="kernel", policy="kernel-test")
    out = tmp_path / "c.json"
    p = cli("compare", a, b, "--layout-a", la, "--layout-b", lb, "--json", str(out), "--fail-on-diff")
    assert p.returncode == 0, p.stderr
    assert "no divergence in 4 iterations" in p.stdout
    assert "slot agreement: 100.00% of 64 pages" in p.stdout
    c = json.loads(out.read_text())
    assert c["schema"] == "swaplab.compare/1"
    assert c["agree"] is True
    assert c["first_divergence"] is None
    assert c["hash_agree_iterations"] == 4
    assert c["slot_agreement"] == 1.0
    assert [r["iteration"] for r in c["iterations"]] == [1, 2, 3, 4]
    assert all(r["sizes"]["64"]["fallback_pct_diff"] == 0 for r in c["iterations"])


def test_divergence_at_known_iteration(cli, tmp_path):
    a, _ = make(tmp_path, "a")
    b, _ = make(tmp_path, "b", fallback_at=3, hash_at=3)
    out = tmp_path / "c.json"
    p = cli("compare", a, b, "--json", str(out))
    assert p.returncode == 0, p.stderr          # disagreement alone is not an error
    assert "first divergence: iteration 3 (counts and hash)" in p.stdout
    c = json.loads(out.read_text())
    assert c["agree"] is False
    assert c["first_divergence"] == {"iteration": 3, "what": ["counts", "hash"]}
    assert c["first_count_divergence"] == 3
    assert c["first_hash_divergence"] == 3
    assert c["hash_agree_iterations"] == 2
    r3 = c["iterations"][2]["sizes"]["64"]
    assert r3["a"]["fallback_pct"] == 0.0
    assert r3["b"]["fallback_pct"] == pytest.approx(100 * 3 / 203, abs=1e-3)
    assert r3["fallback_pct_diff"] == pytest.approx(r3["b"]["fallback_pct"], abs=1e-3)
    assert c["iterations"][3]["counts_agree"] is True and c["iterations"][3]["hash_agree"] is False
    # --fail-on-diff turns disagreement into exit 1
    assert cli("compare", a, b, "--fail-on-diff", "-q").returncode == 1


def test_hash_only_divergence(cli, tmp_path):
    a, _ = make(tmp_path, "a")
    b, _ = make(tmp_path, "b", hash_at=4)
    out = tmp_path / "c.json"
    assert cli("compare", a, b, "--json", str(out), "-q").returncode == 0
    c = json.loads(out.read_text())
    assert c["first_divergence"] == {"iteration": 4, "what": ["hash"]}
    assert c["first_count_divergence"] is None


def test_slot_agreement_from_layouts(cli, tmp_path):
    lay = base_layout()
    lay[5], lay[6] = lay[6], lay[5]          # two pages swapped in other slots
    lay[50] = 9999                           # one page swapped that A kept resident
    a, la = make(tmp_path, "a")
    b, lb = make(tmp_path, "b", layout=lay)
    out = tmp_path / "c.json"
    p = cli("compare", a, b, "--layout-a", la, "--layout-b", lb, "--json", str(out))
    assert p.returncode == 0, p.stderr
    c = json.loads(out.read_text())
    s = c["slots"]
    assert s["npages"] == NPAGES and s["agree"] == NPAGES - 3
    assert c["slot_agreement"] == pytest.approx((NPAGES - 3) / NPAGES)
    assert [d["page"] for d in s["first_differences"]] == [5, 6, 50]
    assert s["first_differences"][0] == {"page": 5, "a": 517, "b": 518}
    assert s["first_differences"][2] == {"page": 50, "a": None, "b": 9999}
    assert c["final_hash_agree"] is False and c["agree"] is False
    assert "first differing pages (slot A vs B): page 5: 517 vs 518" in p.stdout
    assert cli("compare", a, b, "--layout-a", la, "--layout-b", lb, "--fail-on-diff", "-q").returncode == 1


def one_line(p):
    assert "Traceback" not in p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1, p.stderr
    return lines[0]


def test_mismatched_workloads_refused(cli, tmp_path):
    a, _ = make(tmp_path, "a")
    b, _ = make(tmp_path, "b", workload="thp-swap")
    p = cli("compare", a, b)
    assert p.returncode == 2
    assert one_line(p) == ("swaplab compare: error: cannot compare different workloads: "
                           "a.json ran thp-swap-v1, b.json ran thp-swap")
    assert p.stdout == ""


def test_mismatched_parameters_refused(cli, tmp_path):
    a, _ = make(tmp_path, "a")
    b, _ = make(tmp_path, "b", iterations=3, small=True)
    p = cli("compare", a, b)
    assert p.returncode == 2
    assert one_line(p) == ("swaplab compare: error: cannot compare runs with different parameters "
                           "(a.json vs b.json): iterations 4 vs 3; small_folios false vs true")


def test_layout_refusals(cli, tmp_path):
    a, la = make(tmp_path, "a")
    lay = base_layout()
    lay[0] = 7
    b, lb = make(tmp_path, "b", layout=lay)
    p = cli("compare", a, b, "--layout-a", la)
    assert p.returncode == 2
    assert one_line(p) == "swaplab compare: error: --layout-a and --layout-b go together"
    p = cli("compare", a, b, "--layout-a", lb, "--layout-b", la)
    assert p.returncode == 2
    assert one_line(p) == (f"swaplab compare: error: --layout-a '{lb}' does not belong to its result "
                           "(layout hash differs)")
    short = tmp_path / "short.bin"
    short.write_bytes(b"\0" * 16)
    p = cli("compare", a, b, "--layout-a", str(short), "--layout-b", lb)
    assert p.returncode == 2
    assert one_line(p) == f"swaplab compare: error: --layout-a '{short}' holds 2 pages, its result has 64"


def test_not_a_result(cli, tmp_path):
    a, _ = make(tmp_path, "a")
    junk = tmp_path / "junk.json"
    junk.write_text("{\"x\": 1}")
    p = cli("compare", a, str(junk))
    assert p.returncode == 2
    assert one_line(p) == f"swaplab compare: error: result '{junk}' is not a swaplab result (swaplab.result/1)"
    p = cli("compare", a, str(tmp_path / "missing.json"))
    assert p.returncode == 2
    assert "cannot read result" in one_line(p)


def test_model_runs_compare_equal(cli, tmp_path):
    """Two model runs of the same parameters agree page for page."""
    paths = []
    for n in ("m1", "m2"):
        j, l = tmp_path / f"{n}.json", tmp_path / f"{n}.bin"
        cli("run", "thp-swap", "-a", "--iterations", "5", "-q", "--json", str(j), "--layout-dump", str(l),
            check=True)
        paths += [str(j), str(l)]
    out = tmp_path / "c.json"
    p = cli("compare", paths[0], paths[2], "--layout-a", paths[1], "--layout-b", paths[3], "--json", str(out),
            "--fail-on-diff")
    assert p.returncode == 0, p.stderr
    c = json.loads(out.read_text())
    assert c["agree"] and c["slot_agreement"] == 1.0 and c["hash_agree_iterations"] == 5


def test_foreign_pages_on_the_kernel_device_are_reported(cli, tmp_path):
    """A page that is not the workload's on the kernel's device (another process
    swapped onto it, docs/kernel-findings.md F5) is named with its iteration."""
    a, la = make(tmp_path, "m")
    b, lb = make(tmp_path, "k", source="kernel", policy="kernel-6.18", hash_at=3, other_at=3)
    res = json.loads(pathlib.Path(b).read_text())
    assert res["first_other_pages_iteration"] == 3
    assert [it["other_pages"] for it in res["iterations"]] == [0, 0, 1, 1]
    c = json.loads(cli("compare", a, b, "--json", "-", check=True).stdout)
    assert c["interference"] == {"a": None, "b": 3}
    assert c["first_divergence"] == {"iteration": 3, "what": ["hash"]}
    # a model has no other processes: its difference is the slot caches' (cache_held_pages)
    assert c["iterations"][2]["other_pages"] == {"a": None, "b": 1}
    m = json.loads(pathlib.Path(a).read_text())
    assert "first_other_pages_iteration" not in m and m["first_cache_held_iteration"] is None
    assert [it["cache_held_pages"] for it in m["iterations"]] == [0, 0, 0, 0]


def test_malformed_results_refused(cli, tmp_path):
    good, _ = make(tmp_path, "good")
    raw = tmp_path / "raw.json"
    raw.write_bytes(b"\xff\xfe")
    shape = tmp_path / "shape.json"
    shape.write_text('{"schema": "swaplab.result/1"}')
    p = cli("compare", str(raw), good)
    assert p.returncode == 2 and p.stderr.strip() == f"swaplab compare: error: result '{raw}' is not UTF-8 text"
    p = cli("compare", str(shape), good)
    assert p.returncode == 2 and p.stderr.strip() == (
        f"swaplab compare: error: result '{shape}' does not fit the result schema: source is missing")
