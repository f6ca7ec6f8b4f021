"""The Python API: swaplab.run / Result / sweep / compare_groups."""
import pytest

import swaplab


def test_all_lists_the_api():
    for name in ("run", "Result", "sweep", "compare_groups", "ParamError", "policies", "workloads"):
        assert name in swaplab.__all__ and callable(getattr(swaplab, name)) or name == "ParamError"


def test_run_equals_the_cli(cli):
    import json
    r = swaplab.run("thp-swap-v1", policy="linux-6.12", small_folios=True, iterations=12, seed=3)
    p = cli("run", "thp-swap-v1", "--policy", "linux-6.12", "-s", "--iterations", "12", "--seed", "3",
            "--json", "-", check=True)
    res = json.loads(p.stdout)
    assert r.summary == res["summary"]
    assert [it["layout_hash"] for it in r.iterations] == [it["layout_hash"] for it in res["iterations"]]


@pytest.mark.parametrize("kw,msg", [
    ({"swap_size": "1M"}, "swap size 1M is smaller than one cluster (2M)"),
    ({"mthp": "24K"}, "mTHP size 24K is not a power of two"),
    ({"policy": "nope"}, "unknown policy 'nope'"),
    ({"iterations": 0}, "--iterations 0 is outside 1..100000"),
    ({"small_folios": "yes"}, "small_folios must be true or false, not 'yes'"),
    ({"device": "floppy"}, "device 'floppy' is not one of zram, ssd, ssd-discard, hdd, file"),
])
def test_run_checks_like_the_cli(kw, msg):
    with pytest.raises(swaplab.ParamError) as e:
        swaplab.run("thp-swap-v1", **kw)
    assert msg in str(e.value)


def test_to_pandas_one_row_per_iteration_and_size():
    pd = pytest.importorskip("pandas")
    r = swaplab.run("thp-swap", mthp=["16K", "64K"], iterations=5, metrics=True)
    df = r.to_pandas()
    assert isinstance(df, pd.DataFrame)
    assert len(df) == 10 and sorted(set(df["size_kb"])) == [16, 64]
    assert {"fallback_pct", "bluestore_score", "unusable_index"} <= set(df.columns)


def test_sweep_returns_the_table():
    pytest.importorskip("pandas")
    df = swaplab.sweep(policy=["linux-6.18", "buddy"], seed=range(1, 3), iterations=4, jobs=1)
    assert list(df["policy"]) == ["linux-6.18", "linux-6.18", "buddy", "buddy"]
    assert df.attrs["sweep"]["cells"] == 4 and len(df.attrs["aggregate"]) == 2


def test_compare_groups():
    c = swaplab.compare_groups([1.0, 2.0, 3.0], [4.0, 5.0, 6.5])
    assert c["a"]["n"] == 3 and c["diff"] == pytest.approx(3.1666666, rel=1e-6) and c["significant"]
