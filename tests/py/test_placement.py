"""Region placement (issue 10): --region-offset on the model, the aslr draw,
the driver's arguments and the placement study (the live kernel at offsets:
test_kernel_agreement.py)."""
import json

import pytest

from swaplab import golden
from swaplab.model import run_model
from swaplab.params import WorkloadParams, aslr_offsets, parse_region_offset
from swaplab.placement import placement_study

K = 1024


@pytest.mark.parametrize("text,want", [
    ("0", ([0, 0], False)), ("1472K", ([1472 * K, 0], False)), ("1M,64K", ([1 << 20, 64 * K], False)),
    ("4096", ([4096, 0], False)), (" 2044K , 4K ", ([2044 * K, 4 * K], False)), ("ASLR", ([0, 0], True)),
])
def test_parse_region_offset(text, want):
    assert parse_region_offset(text) == want


def test_aslr_draws_64k_multiples_from_the_seed():
    seen = set()
    for seed in range(200):
        a, b = aslr_offsets(seed)
        assert a % (64 * K) == 0 and b % (64 * K) == 0 and a < 2 << 20 and b < 2 << 20
        assert aslr_offsets(seed) == [a, b]
        seen.add(a)
    assert len(seen) == 32          # every 64K multiple below 2M is drawn
    assert aslr_offsets(1) == [256 * K, 1536 * K]


def test_result_records_the_offsets_drawn(cli, tmp_path):
    out = tmp_path / "r.json"
    cli("run", "thp-swap-v1", "-s", "--iterations", "2", "--region-offset", "aslr", "--seed", "7",
        "-q", "--json", str(out), check=True)
    p = json.loads(out.read_text())["params"]
    assert p["region_offset"] == aslr_offsets(7) and p["region_offset_aslr"] is True
    # offset 0: the parameters of every run before (goldens unchanged)
    cli("run", "thp-swap-v1", "--iterations", "2", "-q", "--json", str(out), check=True)
    assert "region_offset" not in json.loads(out.read_text())["params"]


def test_offset_moves_the_w1_fallback_and_repeats():
    """The published W1 shape (16K+64K+256K, glibc rand): the 64K fallback
    depends on region A's offset modulo 256K, and one offset always gives one
    layout (issue 10: 45-55 % on the kernel at four offsets)."""
    fb = {}
    for off in (0, 64 * K, 128 * K, 192 * K, 256 * K + 64 * K):
        wp = WorkloadParams(workload="thp-swap-v1", mthp_kb=[16, 64, 256], rng="glibc", cpu=1,
                            region_offset=[off, 0])
        res, lay = run_model(wp)
        fb[off] = (round(res["summary"]["64"]["mean_fallback_pct"], 2), res["layout"]["hash"])
    assert [fb[o][0] for o in (0, 64 * K, 128 * K, 192 * K)] == [48.08, 44.57, 54.80, 48.03]
    assert fb[256 * K + 64 * K] == fb[64 * K]   # 256K is the largest folio: its period


def test_offset_zero_and_64k_alike_for_64k_alone():
    a = run_model(WorkloadParams(workload="thp-swap", aligned_swapin=True, iterations=10))[1]
    b = run_model(WorkloadParams(workload="thp-swap", aligned_swapin=True, iterations=10,
                                 region_offset=[1984 * K, 0]))[1]
    assert a == b


def test_driver_gets_the_offsets():
    from swaplab.kernel import harness
    wp = WorkloadParams(workload="thp-swap-v1", small_folios=True, region_offset=[704 * K, 12 * K])
    argv = harness._driver_argv(wp, "o.json", "o.lay", ["/dev/zram9"])
    i = argv.index("--region-a-offset")
    assert argv[i:i + 4] == ["--region-a-offset", str(704 * K), "--region-b-offset", str(12 * K)]
    assert "--region-a-offset" not in harness._driver_argv(WorkloadParams(workload="thp-swap-v1"),
                                                           "o.json", "o.lay", ["/dev/zram9"])


def test_placement_study_spread():
    wp = WorkloadParams(workload="thp-swap-v1", mthp_kb=[16, 64, 256], rng="glibc", iterations=20)
    s = placement_study(wp, "linux-6.18", [0, 64 * K, 128 * K, 192 * K, 256 * K])
    assert s["distinct_layouts"] == 4
    assert s["offsets"][0]["layout_hash"] == s["offsets"][4]["layout_hash"]
    assert s["spread"]["64"]["min"] < s["spread"]["64"]["max"]


def test_placement_cli(cli, tmp_path):
    out = tmp_path / "p.json"
    cli("placement", "thp-swap-v1", "--mthp", "16K,64K,256K", "--iterations", "3", "--offsets", "0,64K",
        "--json", str(out), check=True)
    s = json.loads(out.read_text())
    assert [r["offset"] for r in s["offsets"]] == [0, 64 * K]
    p = cli("placement", "thp-swap-v1", "--offsets", "0,3K")
    assert p.returncode == 2 and p.stderr.strip().endswith("--region-offset 3K is not a multiple of 4K")


def test_placed_golden_variants_are_mixed_and_off_2m():
    for variants in (golden.VARIANTS, golden.KERNEL_VARIANTS):
        placed = [o for _, _, o in variants if any(o.get("region_offset", [0]))]
        assert len(placed) >= 4
        assert all(len(o["mthp_kb"]) >= 2 for o in placed)
        assert any(o["region_offset"][0] % (256 * K) for o in placed)


def test_history_names_the_region_offsets(cli):
    p = cli("history", "thp-swap-v1", "--policies", "linux-6.18", "--iterations", "2",
            "--region-offset", "1472K", check=True)
    assert "regions at 1472K,0K" in p.stdout
