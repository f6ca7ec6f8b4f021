"""Statistics over repeated runs, the mmtests way (docs/statistics.md).

Per group of runs (seeds or repeats of one configuration): mean, sample
standard deviation; between two groups A and B: the difference of the means
(B - A, also in percent of A) and Welch's two-sample t-test (unequal
variances), two-sided. scipy computes the p-value where it is installed;
without it, student_t_cdf() below does, through the regularized incomplete
beta function (a continued fraction, evaluated by the modified Lentz
method). Both give the same p-values to 1e-9 (tests/py/test_stats.py).
"""
from __future__ import annotations

import math

ALPHA = 0.05   # significance level of the "significant" flag


def mean(xs) -> float:
    xs = list(xs)
    return sum(xs) / len(xs) if xs else math.nan


def stdev(xs) -> float:
    """Sample standard deviation (n - 1); nan below two values."""
    xs = list(xs)
    n = len(xs)
    if n < 2:
        return math.nan
    m = sum(xs) / n
    return math.sqrt(sum((x - m) ** 2 for x in xs) / (n - 1))


# ------------------------------------------------------------------ Student t

def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 400):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-15:
            break
    return h


def betainc(a: float, b: float, x: float) -> float:
    """Regularized incomplete beta I_x(a, b) for a, b > 0, 0 <= x <= 1."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    lbeta = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
    front = math.exp(lbeta + a * math.log(x) + b * math.log1p(-x))
    # the continued fraction converges fast for x < (a + 1) / (a + b + 2)
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def student_t_cdf(t: float, df: float) -> float:
    """P(T <= t) for Student's t with df (real, > 0) degrees of freedom."""
    if math.isinf(t):
        return 1.0 if t > 0 else 0.0
    tail = 0.5 * betainc(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t > 0 else tail


def _t_sf2(t: float, df: float) -> float:
    """Two-sided p-value of |T| >= |t|."""
    try:
        from scipy import stats as _st
    except ImportError:
        return min(1.0, 2.0 * student_t_cdf(-abs(t), df))
    return float(2.0 * _st.t.sf(abs(t), df))


# ------------------------------------------------------------------ Welch

def welch(a, b) -> dict:
    """Welch's t-test of B against A: t, Welch-Satterthwaite df, two-sided p.
    None for t/df/p when a group has fewer than two values; equal constant
    groups give p = 1, different constant groups p = 0."""
    a, b = list(a), list(b)
    na, nb = len(a), len(b)
    out = {"t": None, "df": None, "p": None}
    if na < 2 or nb < 2:
        return out
    ma, mb = mean(a), mean(b)
    va, vb = stdev(a) ** 2 / na, stdev(b) ** 2 / nb
    if va + vb == 0.0:
        same = ma == mb
        return {"t": 0.0 if same else math.copysign(math.inf, mb - ma), "df": float(na + nb - 2),
                "p": 1.0 if same else 0.0}
    t = (mb - ma) / math.sqrt(va + vb)
    df = (va + vb) ** 2 / (va ** 2 / (na - 1) + vb ** 2 / (nb - 1))
    return {"t": t, "df": df, "p": _t_sf2(t, df)}


def describe(xs) -> dict:
    xs = list(xs)
    return {"n": len(xs), "mean": mean(xs), "sd": stdev(xs),
            "min": min(xs) if xs else math.nan, "max": max(xs) if xs else math.nan}


def compare_groups(a, b, alpha: float = ALPHA) -> dict:
    """mmtests-style comparison of two samples: both descriptions, B - A,
    (B - A) / A in percent (None when A's mean is 0), Welch's test and
    whether p < alpha."""
    da, db = describe(a), describe(b)
    w = welch(a, b)
    diff = db["mean"] - da["mean"]
    return {"a": _clean(da), "b": _clean(db), "diff": _num(diff),
            "diff_pct": _num(100.0 * diff / da["mean"]) if da["mean"] else None,
            "t": _num(w["t"]), "df": _num(w["df"]), "p": _num(w["p"]),
            "significant": None if w["p"] is None else bool(w["p"] < alpha)}


def _num(v):
    """JSON-safe: nan and infinities (t of two different constant groups)
    become None."""
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return None
    return v


def _clean(d: dict) -> dict:
    return {k: _num(v) for k, v in d.items()}
