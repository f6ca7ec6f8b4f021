"""swaplab history: one workload over every allocator policy, one row each.

Runs the workload on the model once per policy (default: every registered
policy, in registry order - the kernel generations, then the baselines;
policies that do not model the --device kind are skipped, with the reason)
and prints, per policy and per enabled mTHP size, the mean, maximum and
last-10-iterations fallback %, the order-0 allocation failures and the run
time. --json writes the rows with each policy's per-iteration fallback
series; --plot draws those series (SVG written here, no dependencies; PNG
through matplotlib where it is installed).
"""
from __future__ import annotations

import datetime as _dt
import io
import os
import sys
from xml.sax.saxutils import escape, quoteattr

from . import __version__, _core
from .model import run_model
from .params import (ParamError, WorkloadParams, format_size, add_workload_options, check_policy_name,
                     params_from_args, shown, shown_path)
from .results import check_outputs, machine_info, write_json, write_output
from . import report

SCHEMA = "swaplab.history/1"

# Okabe-Ito (colour-blind safe), yellow left out (unreadable on white), then Tableau.
COLOURS = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000",
           "#999999", "#8C564B", "#9467BD", "#BCBD22", "#17BECF"]


def add_parsers(sub) -> None:
    h = sub.add_parser("history", help="a workload over every policy: fallback per generation",
                       description="Runs a workload on the model once per allocator policy (default: "
                                   "all, in history order) and prints one row per policy: mean, max "
                                   "and last-10-iterations fallback %% per enabled size, order-0 "
                                   "allocation failures, run time.")
    h.add_argument("workload", help="workload name (swaplab workloads)")
    add_workload_options(h, policy=False)
    h.add_argument("--policies", metavar="A,B,...", default=None,
                   help="policies to run, comma-separated (default: all; swaplab policies)")
    h.add_argument("--plot", metavar="PATH",
                   help="draw fallback %% per iteration, one line per policy: PATH.svg "
                        "(or PATH.png with matplotlib installed)")
    h.add_argument("--json", metavar="PATH", help="write rows and per-iteration series as JSON ('-' for stdout)")
    h.set_defaults(func=main)


# ------------------------------------------------------------------ input

def parse_policies(text: str | None) -> list:
    """'a,b' -> ['a', 'b'] (each registered, none twice); None -> every policy."""
    known = [p["name"] for p in _core.policies()]
    if text is None:
        return known
    names = [t.strip() for t in text.split(",")]
    if not text.strip() or any(not n for n in names):
        raise ParamError(f"--policies '{shown(text)}' has an empty name")
    seen = set()
    for n in names:
        check_policy_name(n)
        if n in seen:
            raise ParamError(f"--policies names {n} twice")
        seen.add(n)
    return names


def _have_matplotlib() -> bool:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def check_plot_path(path: str) -> None:
    """A .svg path, or .png where matplotlib can draw it; writable."""
    ext = os.path.splitext(path)[1].lower()
    if ext == ".png":
        if not _have_matplotlib():
            raise ParamError(f"--plot '{shown_path(path)}': PNG needs matplotlib, which is not installed (use .svg)")
    elif ext != ".svg":
        raise ParamError(f"--plot '{shown_path(path)}' must end in .svg (or .png with matplotlib installed)")


# ------------------------------------------------------------------ running

def policy_row(policy: str, kernel: str, res: dict) -> dict:
    """One policy's row: the summary per size, order-0 failures, time and the
    per-iteration fallback % series per size."""
    sizes = [str(kb) for kb in res["sizes_kb"]]
    return {
        "policy": policy,
        "kernel": kernel,
        "summary": {kb: res["summary"][kb] for kb in sizes},
        "order0_alloc_fail": sum(it["order0"]["alloc_fail"] or 0 for it in res["iterations"]),
        "seconds": res["seconds"],
        "layout_hash": res["layout"]["hash"],
        "series": {kb: [it["sizes"][kb]["fallback_pct"] for it in res["iterations"]] for kb in sizes},
        "extents": res.get("extents"),
    }


def refusals(wp: WorkloadParams, policies: list) -> dict:
    """policy -> why it cannot run these parameters (a device kind it does not model)."""
    out = {}
    for pol in policies:
        try:
            _core.validate(policy=pol, **wp.core_kwargs())
        except ValueError as e:
            out[pol] = str(e)
    return out


def select_policies(wp: WorkloadParams, policies: list, explicit: bool) -> tuple:
    """(policies to run, {skipped policy: reason}). A policy named in
    --policies that cannot run is bad input; of all policies, it is skipped."""
    refused = refusals(wp, policies)
    if refused and explicit:
        raise ParamError(next(iter(refused.values())))
    return [p for p in policies if p not in refused], refused


def run_history(wp: WorkloadParams, policies: list, progress=None, skipped: dict | None = None) -> dict:
    kernels = {p["name"]: p["kernel"] for p in _core.policies()}
    rows = []
    for i, pol in enumerate(policies, 1):
        res, _ = run_model(wp, pol)
        rows.append(policy_row(pol, kernels.get(pol, ""), res))
        if progress:
            s = rows[-1]["summary"]
            progress(f"[{i}/{len(policies)}] {pol}: "
                     + ", ".join(f"{report.size_label(int(kb))} mean {v['mean_fallback_pct']:.2f}%"
                                 for kb, v in s.items())
                     + f", {res['seconds'] * 1000:.1f} ms")
    return {"schema": SCHEMA, "swaplab_version": __version__, "source": "model",
            "workload": wp.workload, "params": wp.as_json(),
            "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            "machine": machine_info(), "sizes_kb": list(wp.mthp_kb), "iterations": wp.iterations,
            "policies": list(policies), "rows": rows,
            "skipped": [{"policy": p, "reason": r} for p, r in (skipped or {}).items()]}


# ------------------------------------------------------------------ printing

def describe(h: dict) -> str:
    """The workload and its options in one line (table header, plot title)."""
    p = h["params"]
    size = (f"{p['swap_bytes'] // (1 << 20)}M" if p["swap_bytes"] % (1 << 20) == 0
            else f"{p['swap_bytes'] // 1024}K")
    swap = f"{p.get('device', 'zram')} swap {size}"
    if p.get("swap_prio", -1) >= 0:
        swap += f" prio {p['swap_prio']}"
    for x in p.get("extra_swap", []):
        swap += f" + {x['kind']} {format_size(x['bytes'])}" + (f" prio {x['prio']}" if x["prio"] >= 0 else "")
    parts = [h["workload"], swap, "mTHP " + ",".join(report.size_label(kb) for kb in h["sizes_kb"])]
    if p["small_folios"]:
        parts.append("-s")
    if p["aligned_swapin"]:
        parts.append("-a")
    if p["region_a_bytes"]:
        parts.append(f"region A {p['region_a_bytes'] // 1024}K")
    if p["region_b_bytes"]:
        parts.append(f"region B {p['region_b_bytes'] // 1024}K")
    if any(p.get("region_offset", [])):
        parts.append("regions at " + ",".join(f"{b // 1024}K" for b in p["region_offset"])
                     + (" (aslr)" if p.get("region_offset_aslr") else ""))
    parts += [f"seed {p['seed']}", f"rng {p['rng']}", f"cpu {p['cpu']}", f"{p['iterations']} iterations"]
    return ", ".join(parts)


def table_columns(h: dict) -> list:
    cols = [("policy", "policy", "{}")]
    for kb in h["sizes_kb"]:
        lab = report.size_label(kb)
        cols += [(f"{kb}.mean", f"{lab} mean%", "{:.2f}"), (f"{kb}.max", f"{lab} max%", "{:.2f}"),
                 (f"{kb}.last10", f"{lab} last10%", "{:.2f}")]
    cols += [("order0_alloc_fail", "order0 fail", "{}"), ("ms", "time ms", "{:.1f}")]
    return cols


def print_history(h: dict, out=sys.stdout) -> None:
    print(f"# history {describe(h)}", file=out)
    flat = []
    for r in h["rows"]:
        f = {"policy": r["policy"], "order0_alloc_fail": r["order0_alloc_fail"], "ms": r["seconds"] * 1000}
        for kb in h["sizes_kb"]:
            s = r["summary"][str(kb)]
            f[f"{kb}.mean"] = s["mean_fallback_pct"]
            f[f"{kb}.max"] = s["max_fallback_pct"]
            f[f"{kb}.last10"] = s["last10_mean_fallback_pct"]
        flat.append(f)
    cols = table_columns(h)
    # the policy column reads best left-aligned
    w = max([len("policy")] + [len(r["policy"]) for r in flat])
    for r in flat:
        r["policy"] = r["policy"].ljust(w)
    report.print_table(flat, [("policy", "policy".ljust(w), "{}")] + cols[1:], out=out)
    for sk in h.get("skipped", []):
        print(f"# skipped {sk['policy']}: {sk['reason']}", file=out)


# ------------------------------------------------------------------ plots

def _nice_step(n: int, target: int = 10) -> int:
    """An x tick step of 1, 2, 5 x 10^k giving about `target` ticks."""
    if n <= target:
        return 1
    raw = n / target
    mag = 10 ** (len(str(int(raw))) - 1)
    for m in (1, 2, 5, 10):
        if m * mag >= raw:
            return m * mag
    return 10 * mag


def line_styles(rows: list, kb: str) -> list:
    """Per row: (dasharray, dashoffset, same_as). A series identical to others
    is drawn dashed so the group's colours alternate along one line, and its
    legend entry names the first policy of the group."""
    groups = {}
    for ri, r in enumerate(rows):
        groups.setdefault(tuple(r["series"][kb]), []).append(ri)
    styles = [None] * len(rows)
    for members in groups.values():
        g = len(members)
        for j, ri in enumerate(members):
            if g == 1:
                styles[ri] = (None, 0, None)
            else:
                seg = 12
                styles[ri] = (f"{seg} {seg * (g - 1)}", -seg * j, rows[members[0]]["policy"] if j else None)
    return styles


def legend(rows: list, kb: str, styles: list, x: int, y: int, right: int) -> str:
    """One panel's legend: colour, policy, mean and last-10 fallback % of the size."""
    out = ['<g class="legend">',
           f'<text x="{x}" y="{y}" font-weight="bold">policy</text>',
           f'<text x="{right}" y="{y}" font-weight="bold" text-anchor="end">mean / last 10</text>']
    for ri, r in enumerate(rows):
        ry = y + 26 + 22 * ri
        s = r["summary"][kb]
        out += [f'<line x1="{x}" y1="{ry - 4}" x2="{x + 24}" y2="{ry - 4}" '
                f'stroke="{COLOURS[ri % len(COLOURS)]}" stroke-width="4" stroke-linecap="round"/>',
                f'<text x="{x + 32}" y="{ry}">{escape(r["policy"])}</text>',
                f'<text x="{right}" y="{ry}" text-anchor="end" fill="#333333">'
                f'{s["mean_fallback_pct"]:.1f} / {s["last10_mean_fallback_pct"]:.1f}%</text>']
    if any(st[2] for st in styles):
        ny = y + 26 + 22 * len(rows) + 6
        out += [f'<text x="{x}" y="{ny}" font-size="11" fill="#555555">dashed: policies with identical '
                f'series share</text>',
                f'<text x="{x}" y="{ny + 14}" font-size="11" fill="#555555">one line in alternating '
                f'colours</text>']
    out.append("</g>")
    return "\n".join(out)


def svg_chart(h: dict) -> str:
    """A line chart per enabled size (x iteration, y fallback % 0..100), one
    coloured line per policy; a legend with each policy's mean and last-10 %."""
    rows = h["rows"]
    sizes = [str(kb) for kb in h["sizes_kb"]]
    n = h["iterations"]
    W = 1080
    left, plot_w = 70, 640
    legend_x = left + plot_w + 36
    top0, gap = 80, 76
    panel_h = max(300, 70 + 22 * len(rows))    # room for the panel's legend
    ylo, yhi = -4.0, 104.0                     # lines at 0 and 100 stay off the frame
    H = top0 + len(sizes) * (panel_h + gap) + 10
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" '
           f'font-family="DejaVu Sans, Helvetica, Arial, sans-serif" font-size="13">',
           f'<rect x="0" y="0" width="{W}" height="{H}" fill="#ffffff"/>',
           f'<text x="{W / 2}" y="30" text-anchor="middle" font-size="18" font-weight="bold">'
           f'{escape("mTHP swap-out fallback per iteration, by policy: " + h["workload"])}</text>',
           f'<text x="{W / 2}" y="54" text-anchor="middle" fill="#333333">'
           f'{escape(describe(h) + " (model)")}</text>']

    def xpos(i: int) -> float:
        return left + (plot_w * (i - 1) / (n - 1) if n > 1 else plot_w / 2)

    for si, kb in enumerate(sizes):
        top = top0 + si * (panel_h + gap)
        bottom = top + panel_h

        def ypos(v: float, top=top) -> float:
            return top + panel_h * (yhi - max(0.0, min(100.0, v))) / (yhi - ylo)

        lab = report.size_label(int(kb))
        styles = line_styles(rows, kb)
        out.append(f'<g class="panel" data-size="{kb}">')
        for v in range(0, 101, 20):
            y = ypos(v)
            out.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + plot_w}" y2="{y:.1f}" '
                       f'stroke="#e3e3e3" stroke-width="1"/>')
            out.append(f'<text x="{left - 8}" y="{y + 4:.1f}" text-anchor="end">{v}</text>')
        out.append(f'<rect x="{left}" y="{top}" width="{plot_w}" height="{panel_h}" fill="none" '
                   f'stroke="#888888" stroke-width="1"/>')
        if n >= 1:
            step = _nice_step(n)
            for t in sorted({1, *range(step, n + 1, step)}):
                x = xpos(t)
                out.append(f'<line x1="{x:.1f}" y1="{bottom}" x2="{x:.1f}" y2="{bottom + 5}" stroke="#888888"/>')
                out.append(f'<text x="{x:.1f}" y="{bottom + 19}" text-anchor="middle">{t}</text>')
        out.append(f'<text x="{left + plot_w / 2}" y="{bottom + 40}" text-anchor="middle">iteration</text>')
        out.append(f'<text x="{left - 46}" y="{top + panel_h / 2}" text-anchor="middle" '
                   f'transform="rotate(-90 {left - 46} {top + panel_h / 2})">'
                   f'{escape(lab)} swpout fallback %</text>')
        if len(sizes) > 1:
            out.append(f'<text x="{left}" y="{top - 8}" font-weight="bold">{escape(lab)} mTHP</text>')
        for ri, r in enumerate(rows):
            pts = " ".join(f"{xpos(i):.1f},{ypos(v):.1f}" for i, v in enumerate(r["series"][kb], 1))
            col = COLOURS[ri % len(COLOURS)]
            dash, off, _ = styles[ri]
            extra = f' stroke-dasharray="{dash}" stroke-dashoffset="{off}"' if dash else ""
            out.append(f'<polyline class="series" data-policy={quoteattr(r["policy"])} data-size="{kb}" '
                       f'points="{pts}" fill="none" stroke="{col}" stroke-width="2.5"{extra} '
                       f'stroke-linejoin="round"/>')
            if 0 < n <= 30:
                for i, v in enumerate(r["series"][kb], 1):
                    out.append(f'<circle cx="{xpos(i):.1f}" cy="{ypos(v):.1f}" r="3" fill="{col}"/>')
        out.append(legend(rows, kb, styles, legend_x, top + 14, W - 16))
        out.append("</g>")
    out.append("</svg>")
    return "\n".join(out) + "\n"


def write_svg(path: str, h: dict) -> None:
    write_output(path, svg_chart(h), "--plot")


def write_png(path: str, h: dict) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    sizes = [str(kb) for kb in h["sizes_kb"]]
    fig, axes = plt.subplots(len(sizes), 1, figsize=(10, 3.6 * len(sizes) + 1.2), squeeze=False)
    for ax, kb in zip(axes[:, 0], sizes):
        styles = line_styles(h["rows"], kb)
        for ri, r in enumerate(h["rows"]):
            s = r["summary"][kb]
            dash, off, _ = styles[ri]
            ls = (-off / 2.5, tuple(float(x) / 2.5 for x in dash.split())) if dash else "-"
            ax.plot(range(1, len(r["series"][kb]) + 1), r["series"][kb], color=COLOURS[ri % len(COLOURS)],
                    linewidth=2.5, linestyle=ls,
                    label=f"{r['policy']}  (mean {s['mean_fallback_pct']:.1f}%, last 10 "
                          f"{s['last10_mean_fallback_pct']:.1f}%)")
        ax.set_ylim(-2, 102)
        ax.set_xlabel("iteration")
        ax.set_ylabel(f"{report.size_label(int(kb))} swpout fallback %")
        ax.grid(True, color="#e3e3e3")
        # solid legend samples: a dashed line's offset can hide its short sample
        handles = [Line2D([0], [0], color=ln.get_color(), linewidth=4) for ln in ax.get_lines()]
        ax.legend(handles, [ln.get_label() for ln in ax.get_lines()], loc="center left",
                  bbox_to_anchor=(1.01, 0.5), fontsize=9)
    fig.suptitle(f"mTHP swap-out fallback per iteration, by policy: {h['workload']}\n{describe(h)} (model)", fontsize=11)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    plt.close(fig)
    write_output(path, buf.getvalue(), "--plot")


# ------------------------------------------------------------------ command

def main(a) -> int:
    wp = params_from_args(a.workload, a)
    policies, skipped = select_policies(wp, parse_policies(a.policies), explicit=a.policies is not None)
    if not policies:
        raise ParamError(f"no policy models device {wp.device}")
    if a.plot is not None:
        check_plot_path(a.plot)
    check_outputs([("--json", a.json), ("--plot", a.plot)])
    progress = lambda s: print(f"history: {s}", file=sys.stderr, flush=True)  # noqa: E731
    for pol, why in skipped.items():
        progress(f"skipped {pol}: {why}")
    h = run_history(wp, policies, progress=progress, skipped=skipped)
    if a.json != "-":
        print_history(h)
    if a.json:
        write_json(a.json, h)
    if a.plot:
        (write_png if a.plot.lower().endswith(".png") else write_svg)(a.plot, h)
    return 0
