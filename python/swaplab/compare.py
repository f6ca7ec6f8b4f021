"""swaplab compare: two results of the same workload and parameters (model vs
kernel, policy vs policy), iteration by iteration.

Per iteration and per mTHP size: both fallback % and their difference, and
whether the per-size counters and the layout hashes agree. With both layout
dumps: the fraction of pages whose slot agrees (and the first pages that
differ); without them, agreement is judged by the layout hashes. The first
divergence is the first iteration whose counters or layout hash differ.
"""
from __future__ import annotations

import os
import struct
import sys

from .params import ParamError, shown, shown_path
from .results import check_input_file, check_outputs, load_result, write_json
from . import report

SCHEMA = "swaplab.compare/1"
NOT_SWAPPED = 0xFFFFFFFFFFFFFFFF
# params that are derived from others and need no separate comparison
_DERIVED = {"mthp_sizes"}


def add_parsers(sub) -> None:
    c = sub.add_parser("compare", help="compare two results (model vs kernel, policy vs policy), or two "
                                       "groups of repeats (--a/--b: mean, sd, Welch's t-test)",
                       description="Compare two results of the same workload and parameters: per "
                                   "iteration and size both fallback %% and their difference, slot "
                                   "agreement (with both layout dumps) or layout-hash agreement, "
                                   "and the first iteration where they diverge. Exit 0 whether "
                                   "they agree or not (1 with --fail-on-diff when they do not). With "
                                   "--a A1.json ... --b B1.json ...: two groups of repeats (seeds), per "
                                   "size mean, sd, B - A and Welch's t-test (docs/statistics.md).")
    c.add_argument("a", metavar="A.json", nargs="?", help="first result")
    c.add_argument("b", metavar="B.json", nargs="?", help="second result")
    c.add_argument("--a", dest="group_a", nargs="+", metavar="A.json",
                   help="group A: repeats of one configuration (seeds or repeated kernel runs); "
                        "with --b, per size mean, sd, B - A and Welch's t-test (docs/statistics.md)")
    c.add_argument("--b", dest="group_b", nargs="+", metavar="B.json", help="group B (with --a)")
    c.add_argument("--alpha", default="0.05", help="significance level of the groups' t-test (default 0.05)")
    c.add_argument("--json", metavar="PATH", help="write the comparison as JSON ('-' for stdout)")
    c.add_argument("--fail-on-diff", action="store_true", help="exit 1 when the results disagree")
    c.add_argument("--layout-a", metavar="PATH", help="layout dump of A (--layout-dump)")
    c.add_argument("--layout-b", metavar="PATH", help="layout dump of B (--layout-dump)")
    c.add_argument("-q", "--quiet", action="store_true", help="print nothing")
    c.set_defaults(func=_cmd_compare)


def _fmt(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, list):
        return ",".join(map(str, v))
    return str(v)


def check_comparable(a: dict, b: dict, name_a: str = "A", name_b: str = "B") -> None:
    """Raises ParamError naming the first differences of workload/parameters."""
    if a.get("workload") != b.get("workload"):
        raise ParamError(f"cannot compare different workloads: {name_a} ran {a.get('workload')}, "
                         f"{name_b} ran {b.get('workload')}")
    pa, pb = a.get("params") or {}, b.get("params") or {}
    diffs = [f"{k} {_fmt(pa.get(k))} vs {_fmt(pb.get(k))}"
             for k in sorted((set(pa) | set(pb)) - _DERIVED) if pa.get(k) != pb.get(k)]
    if diffs:
        raise ParamError(f"cannot compare runs with different parameters ({name_a} vs {name_b}): "
                         + "; ".join(diffs))
    if len(a.get("iterations", [])) != len(b.get("iterations", [])):
        raise ParamError(f"cannot compare: {name_a} has {len(a['iterations'])} iterations, "
                         f"{name_b} has {len(b['iterations'])}")


def read_layout(path: str, res: dict, opt: str) -> bytes:
    check_input_file(path, opt)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise ParamError(f"cannot read {opt} '{shown_path(path)}': {e.strerror}") from None
    n = (res.get("layout") or {}).get("npages")
    if n is not None and len(data) != 8 * n:
        raise ParamError(f"{opt} '{shown_path(path)}' holds {len(data) // 8} pages, its result has {n}")
    from . import _core
    want = (res.get("layout") or {}).get("hash")
    if want is not None and f"{_core.layout_hash(data):016x}" != want:
        raise ParamError(f"{opt} '{shown_path(path)}' does not belong to its result (layout hash differs)")
    return data


def slot_agreement(la: bytes, lb: bytes, show: int = 8) -> dict:
    """Page-by-page agreement of two layouts of the same length."""
    n = len(la) // 8
    a = struct.unpack(f"<{n}Q", la)
    b = struct.unpack(f"<{n}Q", lb)
    agree = 0
    swapped_any = swapped_agree = 0
    first = []
    for i in range(n):
        x, y = a[i], b[i]
        if x != NOT_SWAPPED or y != NOT_SWAPPED:
            swapped_any += 1
        if x == y:
            agree += 1
            if x != NOT_SWAPPED:
                swapped_agree += 1
        elif len(first) < show:
            first.append({"page": i, "a": None if x == NOT_SWAPPED else x,
                          "b": None if y == NOT_SWAPPED else y})
    return {"npages": n, "agree": agree, "fraction": agree / n if n else 1.0,
            "swapped_pages_either": swapped_any, "swapped_agree": swapped_agree,
            "swapped_fraction": swapped_agree / swapped_any if swapped_any else 1.0,
            "swapped_a": sum(1 for x in a if x != NOT_SWAPPED),
            "swapped_b": sum(1 for y in b if y != NOT_SWAPPED),
            "first_differences": first}


def compare(a: dict, b: dict, layout_a: bytes | None = None, layout_b: bytes | None = None,
            name_a: str = "A", name_b: str = "B") -> dict:
    check_comparable(a, b, name_a, name_b)
    sizes = a["sizes_kb"]
    rows = []
    first = None
    first_counts = first_hash = None
    hash_agree = hash_known = 0
    for ia, ib in zip(a["iterations"], b["iterations"]):
        row = {"iteration": ia["iteration"], "sizes": {}}
        counts_same = True
        # order 0 counts too (the kernel's come from /proc/vmstat)
        oa, ob = ia.get("order0") or {}, ib.get("order0") or {}
        for k in ("swpout", "swpin"):
            if oa.get(k) is not None and ob.get(k) is not None and oa[k] != ob[k]:
                counts_same = False
        row["other_pages"] = {"a": ia.get("other_pages"), "b": ib.get("other_pages")}
        for kb in sizes:
            sa, sb = ia["sizes"][str(kb)], ib["sizes"][str(kb)]
            same = all(sa[k] == sb[k] for k in ("swpout", "swpout_fallback", "swpin"))
            counts_same &= same
            row["sizes"][str(kb)] = {
                "a": {k: sa[k] for k in ("swpout", "swpout_fallback", "swpin", "fallback_pct")},
                "b": {k: sb[k] for k in ("swpout", "swpout_fallback", "swpin", "fallback_pct")},
                "fallback_pct_diff": round(sb["fallback_pct"] - sa["fallback_pct"], 4),
                "counts_agree": same}
        ha, hb = ia.get("layout_hash"), ib.get("layout_hash")
        hsame = None if ha is None or hb is None else ha == hb
        if hsame is not None:
            hash_known += 1
            hash_agree += hsame
        row["counts_agree"] = counts_same
        row["hash_agree"] = hsame
        rows.append(row)
        what = ([] if counts_same else ["counts"]) + (["hash"] if hsame is False else [])
        if what and first is None:
            first = {"iteration": ia["iteration"], "what": what}
        if not counts_same and first_counts is None:
            first_counts = ia["iteration"]
        if hsame is False and first_hash is None:
            first_hash = ia["iteration"]
    summary = {}
    for kb in sizes:
        sa, sb = a["summary"][str(kb)], b["summary"][str(kb)]
        summary[str(kb)] = {"mean_fallback_pct_a": sa["mean_fallback_pct"],
                            "mean_fallback_pct_b": sb["mean_fallback_pct"],
                            "mean_fallback_pct_diff": round(sb["mean_fallback_pct"] - sa["mean_fallback_pct"], 4)}
    out = {
        "schema": SCHEMA,
        "a": {"name": name_a, "source": a.get("source"), "policy": a.get("policy")},
        "b": {"name": name_b, "source": b.get("source"), "policy": b.get("policy")},
        "workload": a["workload"], "params": a["params"], "sizes_kb": sizes,
        "iterations": rows,
        "summary": summary,
        "hash_agree_iterations": hash_agree,
        "hash_known_iterations": hash_known,
        "final_hash_agree": a["layout"]["hash"] == b["layout"]["hash"],
        "first_divergence": first,
        "first_count_divergence": first_counts,
        "first_hash_divergence": first_hash,
        # first iteration where a kernel result's device held pages that are
        # not the workload's: other processes swapped onto it (docs F5)
        "interference": {"a": a.get("first_other_pages_iteration") if a.get("source") == "kernel" else None,
                         "b": b.get("first_other_pages_iteration") if b.get("source") == "kernel" else None},
        "slots": None,
    }
    if layout_a is not None and layout_b is not None:
        if len(layout_a) != len(layout_b):
            raise ParamError(f"the layouts differ in size: {len(layout_a) // 8} vs {len(layout_b) // 8} pages")
        out["slots"] = slot_agreement(layout_a, layout_b)
        out["slot_agreement"] = out["slots"]["fraction"]
    else:
        out["slot_agreement"] = None
    out["agree"] = first is None and out["final_hash_agree"] and (
        out["slots"] is None or out["slots"]["agree"] == out["slots"]["npages"])
    return out


def _label(r: dict) -> str:
    return f"{r['source']}:{r['policy']}"


def print_compare(c: dict, out=sys.stdout) -> None:
    la, lb = _label(c["a"]), _label(c["b"])
    p = c["params"]
    sizes = c["sizes_kb"]
    print(f"# compare A={c['a']['name']} ({la})  B={c['b']['name']} ({lb})", file=out)
    print(f"# {c['workload']} swap={p['swap_bytes'] // (1 << 20)}M "
          f"mthp={','.join(map(report.size_label, sizes))}{' -s' if p['small_folios'] else ''}"
          f"{' -a' if p['aligned_swapin'] else ''} seed={p['seed']} rng={p['rng']}", file=out)
    head = f"{'iter':>5}"
    for kb in sizes:
        lab = report.size_label(kb)
        head += f" | {lab + ' A%':>8} {'B%':>7} {'B-A':>7} {'counts':>6}"
    head += " | hash"
    print(head, file=out)
    for r in c["iterations"]:
        line = f"{r['iteration']:>5}"
        for kb in sizes:
            s = r["sizes"][str(kb)]
            line += (f" | {s['a']['fallback_pct']:>7.2f}% {s['b']['fallback_pct']:>6.2f}% "
                     f"{s['fallback_pct_diff']:>+7.2f} {'same' if s['counts_agree'] else 'DIFF':>6}")
        h = r["hash_agree"]
        line += " | " + ("-" if h is None else "same" if h else "DIFF")
        print(line, file=out)
    for kb in sizes:
        s = c["summary"][str(kb)]
        print(f"summary {report.size_label(kb)}: mean fallback A {s['mean_fallback_pct_a']:.2f}%, "
              f"B {s['mean_fallback_pct_b']:.2f}%, B-A {s['mean_fallback_pct_diff']:+.2f}", file=out)
    n = len(c["iterations"])
    print(f"layout hashes agree in {c['hash_agree_iterations']} of {c['hash_known_iterations']} "
          f"iterations; final layout hash {'agrees' if c['final_hash_agree'] else 'differs'}", file=out)
    if c["slots"] is not None:
        s = c["slots"]
        print(f"slot agreement: {100 * s['fraction']:.2f}% of {s['npages']} pages "
              f"({s['swapped_agree']} of {s['swapped_pages_either']} swapped pages in the same slot; "
              f"swapped A {s['swapped_a']}, B {s['swapped_b']})", file=out)
        if s["first_differences"]:
            ex = ", ".join(f"page {d['page']}: {d['a'] if d['a'] is not None else '-'} vs "
                           f"{d['b'] if d['b'] is not None else '-'}" for d in s["first_differences"][:4])
            print(f"first differing pages (slot A vs B): {ex}", file=out)
    fd = c["first_divergence"]
    if fd is None:
        print(f"no divergence in {n} iterations" + ("" if c["agree"] else " (but the final layouts differ)"),
              file=out)
    else:
        print(f"first divergence: iteration {fd['iteration']} ({' and '.join(fd['what'])})", file=out)


GROUP_SCHEMA = "swaplab.compare-groups/1"
GROUP_VALUES = [("mean_fallback_pct", "mean fallback %"), ("last10_mean_fallback_pct", "last-10 fallback %"),
                ("max_fallback_pct", "max fallback %")]


def check_group_comparable(ga: list, gb: list) -> None:
    """Every run of both groups ran the same workload and parameters but the
    seed; each group is one configuration (source and policy)."""
    def no_seed(r):
        return dict(r, params={k: v for k, v in r["params"].items() if k != "seed"})

    first_name, first = ga[0]
    for name, r in ga[1:] + gb:
        check_comparable(no_seed(first), no_seed(r), first_name, name)
    for label, g in (("A", ga), ("B", gb)):
        confs = {(r.get("source"), r.get("policy")) for _, r in g}
        if len(confs) > 1:
            raise ParamError(f"group {label} mixes configurations: "
                             + ", ".join(sorted(f"{s}:{p}" for s, p in confs)))


def compare_groups(ga: list, gb: list, alpha: float = 0.05) -> dict:
    """ga, gb: [(name, result)]. Per size and value, mmtests' table: both
    groups' mean and sd, B - A and Welch's t-test (stats.compare_groups)."""
    from . import stats
    check_group_comparable(ga, gb)
    ra = ga[0][1]
    sizes = ra["sizes_kb"]
    out = {"schema": GROUP_SCHEMA, "workload": ra["workload"],
           "params": {k: v for k, v in ra["params"].items() if k != "seed"}, "sizes_kb": sizes,
           "alpha": alpha, "sizes": {}}
    for label, g in (("a", ga), ("b", gb)):
        out[label] = {"files": [n for n, _ in g], "source": g[0][1].get("source"),
                      "policy": g[0][1].get("policy"), "seeds": [r["params"].get("seed") for _, r in g]}
    for kb in sizes:
        out["sizes"][str(kb)] = {
            v: stats.compare_groups([r["summary"][str(kb)][v] for _, r in ga],
                                    [r["summary"][str(kb)][v] for _, r in gb], alpha)
            for v, _ in GROUP_VALUES}
    return out


def _f(v, fmt="{:.2f}") -> str:
    return "-" if v is None else fmt.format(v)


def print_compare_groups(c: dict, out=sys.stdout) -> None:
    for label in ("a", "b"):
        g = c[label]
        print(f"# {label.upper()}: {g['source']}:{g['policy']}, {len(g['files'])} runs, seeds "
              f"{','.join(map(str, g['seeds']))}", file=out)
    print(f"# {c['workload']}; Welch's t-test, two-sided, * where p < {c['alpha']:g}", file=out)
    rows = []
    for kb in c["sizes_kb"]:
        for v, lab in GROUP_VALUES:
            s = c["sizes"][str(kb)][v]
            rows.append({"size": report.size_label(kb), "value": lab,
                         "a": f"{_f(s['a']['mean'])} ± {_f(s['a']['sd'])}",
                         "b": f"{_f(s['b']['mean'])} ± {_f(s['b']['sd'])}",
                         "diff": _f(s["diff"], "{:+.2f}"),
                         "pct": _f(s["diff_pct"], "{:+.1f}%"),
                         "p": _f(s["p"], "{:.4f}") + (" *" if s["significant"] else "")})
    cols = [("size", "size", "{}"), ("value", "value", "{}"), ("a", "A mean ± sd", "{}"),
            ("b", "B mean ± sd", "{}"), ("diff", "B-A", "{}"), ("pct", "B-A %", "{}"), ("p", "p", "{}")]
    report.print_table(rows, cols, out=out)


def _cmd_compare_groups(a) -> int:
    try:
        alpha = float(a.alpha)
    except ValueError:
        raise ParamError(f"--alpha '{shown(a.alpha)}' is not a number") from None
    if not 0.0 < alpha < 1.0:
        raise ParamError(f"--alpha {shown(a.alpha)} is not between 0 and 1")
    if a.a or a.b or a.layout_a or a.layout_b:
        raise ParamError("--a/--b compare groups: give every result to --a or --b, no layouts")
    if not a.group_a or not a.group_b:
        raise ParamError("--a and --b go together")
    check_outputs([("--json", a.json)],
                  inputs=[(f"result {p}", p) for p in [*a.group_a, *a.group_b]])
    ga = [(os.path.basename(p), load_result(p)) for p in a.group_a]
    gb = [(os.path.basename(p), load_result(p)) for p in a.group_b]
    c = compare_groups(ga, gb, alpha)
    if not a.quiet and a.json != "-":
        print_compare_groups(c)
    if a.json:
        write_json(a.json, c)
    return 0


def _cmd_compare(a) -> int:
    if a.group_a or a.group_b:
        return _cmd_compare_groups(a)
    if a.a is None or a.b is None:
        raise ParamError("compare needs A.json and B.json, or groups --a A1.json ... --b B1.json ...")
    for opt, v in (("--layout-a", a.layout_a), ("--layout-b", a.layout_b)):
        if v == "":
            raise ParamError(f"{opt} '' names no file")
    if bool(a.layout_a) != bool(a.layout_b):
        raise ParamError("--layout-a and --layout-b go together")
    check_outputs([("--json", a.json)], inputs=[("result A", a.a), ("result B", a.b),
                                                ("--layout-a", a.layout_a), ("--layout-b", a.layout_b)])
    ra, rb = load_result(a.a), load_result(a.b)
    la = read_layout(a.layout_a, ra, "--layout-a") if a.layout_a else None
    lb = read_layout(a.layout_b, rb, "--layout-b") if a.layout_b else None
    c = compare(ra, rb, la, lb, name_a=os.path.basename(a.a), name_b=os.path.basename(a.b))
    if not a.quiet and a.json != "-":
        print_compare(c)
    if a.json:
        write_json(a.json, c)
    return 1 if (a.fail_on_diff and not c["agree"]) else 0
