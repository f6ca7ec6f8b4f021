"""stats.py: the Student t CDF written here against known values, Welch's
t-test against scipy (where installed) and textbook cases."""
import json
import math
import pathlib

import pytest

from swaplab import stats


@pytest.mark.parametrize("t,df,want", [
    (1.0, 1, 0.75),                      # Cauchy: 1/2 + atan(t)/pi
    (-1.0, 1, 0.25),
    (2.228138851986, 10, 0.975),         # the 97.5 % quantile of t(10)
    (1.959963984540, 1e5, 0.9749986135),  # large df: near the normal's 0.975
    (0.0, 3.5, 0.5),
    (12.706204736175, 1, 0.975),
])
def test_student_t_cdf_known_values(t, df, want):
    assert stats.student_t_cdf(t, df) == pytest.approx(want, abs=1e-8)


def test_student_t_cdf_df2_closed_form():
    # F(t) = 1/2 + t / (2 sqrt(2 + t^2)) for two degrees of freedom
    for t in (-7.5, -1.0, 0.3, 2.0, 40.0):
        assert stats.student_t_cdf(t, 2) == pytest.approx(0.5 + t / (2 * math.sqrt(2 + t * t)), abs=1e-12)


def test_welch_textbook_case():
    a = [1, 2, 3, 4, 5.5]
    b = [3, 4.1, 5, 6, 8]
    w = stats.welch(a, b)
    assert w["t"] == pytest.approx(1.8324954161169573, rel=1e-12)
    assert w["df"] == pytest.approx(7.937879342733158, rel=1e-12)
    assert w["p"] == pytest.approx(0.10452890664191773, rel=1e-8)


def test_welch_own_cdf_matches_scipy():
    st = pytest.importorskip("scipy.stats")
    for a, b in (([0.1, 0.5, 0.4, 0.9], [1.5, 1.1, 0.7]), ([10, 11, 12], [10.5, 13, 14, 12, 16])):
        w = stats.welch(a, b)
        own = 2 * stats.student_t_cdf(-abs(w["t"]), w["df"])
        ref = st.ttest_ind(b, a, equal_var=False)
        assert own == pytest.approx(ref.pvalue, rel=1e-9)
        assert w["p"] == pytest.approx(ref.pvalue, rel=1e-9)


def test_degenerate_groups():
    assert stats.welch([1.0], [2.0, 3.0]) == {"t": None, "df": None, "p": None}
    assert stats.welch([2.0, 2.0], [2.0, 2.0])["p"] == 1.0
    assert stats.welch([2.0, 2.0], [5.0, 5.0])["p"] == 0.0
    c = stats.compare_groups([0.0, 0.0], [5.0, 5.0])
    assert c["diff"] == 5.0 and c["diff_pct"] is None and c["t"] is None and c["significant"] is True
    assert stats.compare_groups([1.0], [2.0])["significant"] is None


@pytest.fixture(scope="module")
def seeds(tmp_path_factory):
    from conftest import run_cli
    d = tmp_path_factory.mktemp("seeds")
    for pol in ("linux-6.12", "linux-6.18"):
        for s in (1, 2, 3):
            run_cli("run", "thp-swap-v1", "-s", "--policy", pol, "--seed", str(s), "--iterations", "30",
                    "--swap-size", "48M", "-q", "--json", str(d / f"{pol}-{s}.json"), check=True)
    run_cli("run", "thp-swap-v1", "-s", "--seed", "4", "--iterations", "31", "--swap-size", "48M",
            "-q", "--json", str(d / "other.json"), check=True)
    return d


def test_compare_groups_cli(cli, seeds):
    a = [str(seeds / f"linux-6.12-{s}.json") for s in (1, 2, 3)]
    b = [str(seeds / f"linux-6.18-{s}.json") for s in (1, 2, 3)]
    p = cli("compare", "--a", *a, "--b", *b, "--json", "-", check=True)
    c = json.loads(p.stdout)
    assert c["schema"] == "swaplab.compare-groups/1" and c["a"]["seeds"] == [1, 2, 3]
    s = c["sizes"]["64"]["mean_fallback_pct"]
    means = [json.loads(pathlib.Path(f).read_text())["summary"]["64"]["mean_fallback_pct"] for f in a]
    assert s["a"]["n"] == 3 and s["a"]["mean"] == pytest.approx(sum(means) / 3)
    assert s["a"]["sd"] == pytest.approx(stats.stdev(means))
    assert s["p"] == pytest.approx(stats.welch(means, [json.loads(pathlib.Path(f).read_text())["summary"]["64"]
                                                       ["mean_fallback_pct"] for f in b])["p"])
    p = cli("compare", "--a", *a, "--b", *b, check=True)
    assert "A mean ± sd" in p.stdout.splitlines()[3] and "Welch" in p.stdout


def test_compare_groups_refusals(cli, seeds):
    a1, b1 = str(seeds / "linux-6.12-1.json"), str(seeds / "linux-6.18-1.json")
    p = cli("compare", "--a", a1, b1, "--b", b1)
    assert p.returncode == 2 and p.stderr == ("swaplab compare: error: group A mixes configurations: "
                                              "model:linux-6.12, model:linux-6.18\n")
    p = cli("compare", "--a", a1, "--b", str(seeds / "other.json"))
    assert p.returncode == 2 and "iterations 30 vs 31" in p.stderr and p.stderr.count("\n") == 1
    p = cli("compare", "--a", a1)
    assert p.returncode == 2 and p.stderr == "swaplab compare: error: --a and --b go together\n"
