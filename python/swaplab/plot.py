"""Pictures, with matplotlib (the optional [plot] extra): one style for all.

  fallback    mTHP swap-out fallback % per iteration, one line per policy or
              result, a panel per size; an iteration that swapped nothing out
              at a size (0/0) is a gap, not 0 %        (results, history)
  heatmap     a sweep: policy x cell, mean fallback % over seeds  (sweep)
  clusters    a model run's cluster states over time: x cluster, y iteration,
              colour state and order (run --metrics)    (model result)
  slots       the final slot map: a row per cluster, a column per slot,
              coloured by the region whose page holds it (result + layout dump)
  speedup     bench threads: speedup over one thread, the ideal line and the
              spread over repeats (several JSON files)   (bench threads)

`swaplab plot INPUT... -o FILE.png|svg|pdf` picks the picture from the
inputs (--kind chooses among those an input allows).
"""
from __future__ import annotations

import csv
import io
import math
import os

from .params import ParamError, format_size, shown_path
from .results import check_input_file, check_outputs, check_writable, load_json_file, write_output
from . import report

# Okabe-Ito (colour-blind safe), yellow left out (unreadable on white), then Tableau.
COLOURS = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000",
           "#999999", "#8C564B", "#9467BD", "#BCBD22", "#17BECF"]
FORMATS = (".png", ".svg", ".pdf")
STATES = ["isolated", "free", "nonfull", "frag", "full", "discard"]
STATE_COLOURS = {"isolated": "#CC79A7", "free": "#FFFFFF", "nonfull": "#56B4E9", "frag": "#E69F00",
                 "full": "#9A9A9A", "discard": "#000000"}


def _mpl():
    try:
        import matplotlib
    except ImportError:
        raise ParamError("plots need matplotlib, which is not installed (pip install 'swaplab[plot]')") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    plt.rcParams.update({"font.size": 10, "axes.grid": True, "grid.color": "#e3e3e3",
                         "axes.spines.top": False, "axes.spines.right": False,
                         "svg.hashsalt": "swaplab", "svg.fonttype": "none"})
    return plt


def check_plot_path(path: str, opt: str = "-o") -> None:
    """A .png, .svg or .pdf path that can be written; matplotlib installed."""
    if os.path.splitext(path)[1].lower() not in FORMATS:
        raise ParamError(f"{opt} '{shown_path(path)}' must end in .png, .svg or .pdf")
    _mpl()
    check_writable(path, opt)


def save(fig, path: str, opt: str = "--plot") -> None:
    """Draws fig into memory, then writes it as every output is written
    (results.write_output: a regular file or a new path, atomically)."""
    plt = _mpl()
    ext = os.path.splitext(path)[1].lower()
    meta = {"Date": None} if ext == ".svg" else ({"CreationDate": None} if ext == ".pdf" else {})
    buf = io.BytesIO()
    fig.savefig(buf, format=ext[1:], dpi=120, bbox_inches="tight", metadata=meta)
    plt.close(fig)
    write_output(path, buf.getvalue(), opt)


# ------------------------------------------------------------------ fallback

def fallback_series(res: dict) -> dict:
    """{size kB (text): [fallback % or nan for 0/0, per iteration]}."""
    out = {}
    for kb in res["sizes_kb"]:
        vals = []
        for it in res["iterations"]:
            s = it["sizes"][str(kb)]
            n = s["swpout"] + s["swpout_fallback"]
            vals.append(100.0 * s["swpout_fallback"] / n if n else math.nan)
        out[str(kb)] = vals
    return out


def fallback_figure(lines: list, sizes_kb: list, title: str, subtitle: str = ""):
    """lines: [(label, {size kB text: [% or nan/None per iteration]})] -> a figure with a
    panel per size; nan (0/0: nothing swapped out at that size) leaves a gap."""
    plt = _mpl()
    fig, axes = plt.subplots(len(sizes_kb), 1, figsize=(10, 3.4 * len(sizes_kb) + 1.0), squeeze=False)
    for ax, kb in zip(axes[:, 0], sizes_kb):
        nodata = 0
        for i, (label, series) in enumerate(lines):
            ys = [math.nan if v is None else v for v in series[str(kb)]]
            nodata += sum(1 for v in ys if math.isnan(v))
            xs = range(1, len(ys) + 1)
            valid = [v for v in ys if not math.isnan(v)]
            mean = f"mean {sum(valid) / len(valid):.1f}%" if valid else "no data"
            style = dict(color=COLOURS[i % len(COLOURS)], linewidth=2,
                         linestyle="-" if i < len(COLOURS) else "--")
            ax.plot(xs, ys, label=f"{label} ({mean})", marker="o" if len(ys) <= 30 else None,
                    markersize=3, **style)
        ax.set_ylim(-3, 103)
        n = max((len(series[str(kb)]) for _, series in lines), default=1)
        ax.set_xlim(0.5, n + 0.5)
        ax.set_xlabel("iteration")
        ax.set_ylabel(f"{report.size_label(int(kb))} swpout fallback %")
        if nodata:
            ax.text(0.01, 0.97, "gaps: iterations that swapped out nothing at this size (0/0, no data)",
                    transform=ax.transAxes, fontsize=8, va="top", color="#555555")
        ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=9, frameon=False)
    fig.suptitle(title + (f"\n{subtitle}" if subtitle else ""), fontsize=11)
    fig.tight_layout()
    return fig


def describe_result(res: dict) -> str:
    p = res["params"]
    parts = [res["workload"], f"{p.get('device', 'zram')} swap {format_size(p['swap_bytes'])}",
             "mTHP " + ",".join(report.size_label(kb) for kb in res["sizes_kb"])]
    parts += [f for f, on in (("-s", p.get("small_folios")), ("-a", p.get("aligned_swapin"))) if on]
    parts += [f"seed {p['seed']}", f"{len(res['iterations'])} iterations"]
    return ", ".join(parts)


def results_fallback_figure(results: list):
    names = [f"{r.get('source', 'model')}:{r['policy']}" for _, r in results]
    if len(set(names)) < len(names):   # the same policy twice: tell them apart by file
        names = [f"{n} [{os.path.basename(p)}]" for n, (p, _) in zip(names, results)]
    sizes = results[0][1]["sizes_kb"]
    for p, r in results:
        if r["sizes_kb"] != sizes:
            raise ParamError(f"'{p}' has mTHP sizes {r['sizes_kb']}, the first result {sizes}")
    return fallback_figure([(n, fallback_series(r)) for n, (_, r) in zip(names, results)], sizes,
                           "mTHP swap-out fallback per iteration", describe_result(results[0][1]))


# ------------------------------------------------------------------ heat map

def read_sweep_table(path: str) -> list:
    if os.path.isdir(path):
        path = os.path.join(path, "table.csv")
    try:
        with open(path, newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        raise ParamError(f"cannot read sweep table '{path}': {e.strerror}") from None
    if not rows or "policy" not in rows[0] or "mean_fallback_pct" not in rows[0]:
        raise ParamError(f"'{path}' is not a sweep table (swaplab sweep)")
    return rows


def heatmap_figure(rows: list, value: str = "mean_fallback_pct", size_kb: str | None = None):
    """Policy x cell: the value averaged over seeds. A cell is every other
    axis that varies in the table (size included)."""
    from .sweeps import AXES
    plt = _mpl()
    if value not in rows[0]:
        raise ParamError(f"the sweep table has no column '{value}'")
    if size_kb is not None:
        rows = [r for r in rows if r["size_kb"] == str(size_kb)]
        if not rows:
            raise ParamError(f"the sweep table has no rows of size {size_kb}K")
    varying = [k for k in AXES + ["size_kb"] if k not in ("policy", "seed")
               and len({r[k] for r in rows}) > 1]
    policies = list(dict.fromkeys(r["policy"] for r in rows))
    cells = list(dict.fromkeys(tuple(r[k] for k in varying) for r in rows))
    acc = {}
    for r in rows:
        if r[value] == "":
            continue
        acc.setdefault((r["policy"], tuple(r[k] for k in varying)), []).append(float(r[value]))
    grid = [[(sum(acc[(p, c)]) / len(acc[(p, c)])) if (p, c) in acc else math.nan for c in cells]
            for p in policies]
    labels = [", ".join(f"{k}={v}" for k, v in zip(varying, c)) or "all" for c in cells]
    fig, ax = plt.subplots(figsize=(max(6, 0.9 * len(cells) + 3), 0.5 * len(policies) + 2.2))
    cmap = plt.get_cmap("viridis").copy()
    cmap.set_bad("#d9d9d9")
    im = ax.imshow(grid, aspect="auto", cmap=cmap, vmin=0,
                   vmax=100 if value.endswith("_pct") else None)
    ax.grid(False)
    ax.set_yticks(range(len(policies)), policies)
    ax.set_xticks(range(len(cells)), labels, rotation=40, ha="right", fontsize=8)
    for i, row in enumerate(grid):
        for j, v in enumerate(row):
            ax.text(j, i, "no data" if math.isnan(v) else f"{v:.1f}", ha="center", va="center",
                    fontsize=7, color="black" if math.isnan(v) or v >= 60 else "white")
    seeds = len({r["seed"] for r in rows})
    fig.colorbar(im, ax=ax, label=value.replace("_", " "))
    ax.set_title(f"sweep: {value.replace('_', ' ')} by policy and cell (mean over {seeds} seed"
                 f"{'s' if seeds != 1 else ''})", fontsize=11)
    fig.tight_layout()
    return fig


# ------------------------------------------------------------------ cluster map

def cluster_map_figure(res: dict):
    """x cluster, y iteration; colour the state, shade the order."""
    from matplotlib.colors import ListedColormap, to_rgb
    from matplotlib.patches import Patch
    plt = _mpl()
    maps = [(it.get("frag") or {}).get("cluster_map") for it in res["iterations"]]
    if not maps or any(m is None for m in maps):
        raise ParamError("a cluster map needs a model result run with --metrics "
                         "(on a device of at most 8192 clusters)")
    codes = sorted({m[i:i + 2] for m in maps for i in range(0, len(m), 2)})
    index = {c: i for i, c in enumerate(codes)}
    colours, legend = [], []
    for c in codes:
        state, order = STATES[int(c[0], 16)], int(c[1], 16)
        base = to_rgb(STATE_COLOURS[state])
        # a state's higher orders darker, by rank among the orders present
        rank = sorted(int(x[1], 16) for x in codes if x[0] == c[0]).index(order)
        k = (1.0, 0.62, 0.42, 0.3)[min(rank, 3)] if state not in ("free", "isolated", "discard") else 1.0
        colours.append(tuple(x * k for x in base))
        legend.append(Patch(facecolor=colours[-1], edgecolor="#777777",
                            label=state if state in ("free", "isolated") else f"{state}, order {order}"))
    img = [[index[m[i:i + 2]] for i in range(0, len(m), 2)] for m in maps]
    fig, ax = plt.subplots(figsize=(11, 6))
    ax.imshow(img, aspect="auto", interpolation="nearest", cmap=ListedColormap(colours),
              vmin=-0.5, vmax=len(codes) - 0.5, origin="lower",
              extent=(-0.5, len(img[0]) - 0.5, 0.5, len(img) + 0.5))
    ax.grid(False)
    ax.set_xlabel("cluster (2 MiB of swap)")
    ax.set_ylabel("iteration")
    ax.legend(handles=legend, loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=9, frameon=False)
    ax.set_title(f"cluster states per iteration: {res.get('source', 'model')}:{res['policy']}\n"
                 f"{describe_result(res)}", fontsize=11)
    fig.tight_layout()
    return fig


# ------------------------------------------------------------------ slot map

def slot_map_figure(res: dict, layout: bytes):
    """A row per cluster, a column per slot: free, the header, or the region
    whose page holds the slot (device 0)."""
    import struct
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch
    from .metrics import NOT_SWAPPED, TYPE_SHIFT
    plt = _mpl()
    p = res["params"]
    nslots = p["swap_bytes"] // 4096
    nclusters = (nslots + 511) // 512
    npages = len(layout) // 8
    region_a = (p.get("region_a_bytes") or 60 << 20) // 4096
    grid = [[0] * 512 for _ in range(nclusters)]
    grid[0][0] = 1
    for s in range(nslots, nclusters * 512):
        grid[s // 512][s % 512] = 1
    for page, e in enumerate(struct.unpack(f"<{npages}Q", layout)):
        if e == NOT_SWAPPED or e >> TYPE_SHIFT or e >= nslots:
            continue
        grid[e // 512][e % 512] = 2 if page < region_a else 3
    names = ["free", "header / past the end", "region A page", "region B page"]
    colours = ["#FFFFFF", "#999999", "#0072B2", "#D55E00"]
    fig, ax = plt.subplots(figsize=(11, max(3.0, min(12.0, 0.12 * nclusters + 1.5))))
    ax.imshow(grid, aspect="auto", interpolation="nearest", cmap=ListedColormap(colours), vmin=-0.5,
              vmax=3.5)
    ax.grid(False)
    ax.set_xlabel("slot in cluster")
    ax.set_ylabel("cluster")
    ax.legend(handles=[Patch(facecolor=c, edgecolor="#777777", label=n) for c, n in zip(colours, names)],
              loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=9, frameon=False)
    note = ("\n(the workload's pages only: slots other processes hold look free)"
            if res.get("source") == "kernel" else "")
    ax.set_title(f"final slot map: {res.get('source', 'model')}:{res['policy']}\n{describe_result(res)}{note}",
                 fontsize=11)
    fig.tight_layout()
    return fig


# ------------------------------------------------------------------ speedup

def speedup_figure(benches: list):
    """bench threads results (repeats: several files) -> speedup over one
    thread per series, mean line, min-max band, the ideal line."""
    plt = _mpl()
    series = {}
    for b in benches:
        base = {}
        for r in b["results"]:
            key = (r["policy"], r["case"], r["fill_pct"])
            if r["threads"] == 1:
                base[key] = r["ops_per_sec"]
        for r in b["results"]:
            key = (r["policy"], r["case"], r["fill_pct"])
            if key in base and base[key]:
                series.setdefault(key, {}).setdefault(r["threads"], []).append(r["ops_per_sec"] / base[key])
    if not series:
        raise ParamError("the bench threads results hold no 1-thread run to scale from")
    fig, ax = plt.subplots(figsize=(9, 5.5))
    tmax = max(t for s in series.values() for t in s)
    ax.plot([1, tmax], [1, tmax], color="#777777", linestyle=":", linewidth=1.5, label="ideal")
    for i, (key, pts) in enumerate(sorted(series.items())):
        ts = sorted(pts)
        mean = [sum(pts[t]) / len(pts[t]) for t in ts]
        col = COLOURS[i % len(COLOURS)]
        ax.plot(ts, mean, marker="o", color=col, linewidth=2, label=f"{key[0]} {key[1]} {key[2]}% fill")
        if any(len(pts[t]) > 1 for t in ts):
            ax.fill_between(ts, [min(pts[t]) for t in ts], [max(pts[t]) for t in ts], color=col, alpha=0.18)
    ax.set_xlabel("threads (one CPU each)")
    ax.set_ylabel("speedup over 1 thread")
    ax.set_xticks(sorted({t for s in series.values() for t in s}))
    ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=9, frameon=False)
    reps = len(benches)
    cpus = benches[0].get("machine", {}).get("cpus")
    ax.set_title(f"bench threads: speedup, mean of {reps} run{'s' if reps != 1 else ''}"
                 f"{' (band: min-max)' if reps > 1 else ''}, {cpus} CPUs", fontsize=11)
    fig.tight_layout()
    return fig


# ------------------------------------------------------------------ command

KINDS = ["fallback", "heatmap", "clusters", "slots", "speedup"]


def load_input(path: str) -> tuple:
    """(kind of input, data): 'sweep' (table rows), 'result', 'history', 'bench-threads'."""
    if os.path.isdir(path):
        return "sweep", read_sweep_table(path)
    check_input_file(path, "plot input")      # a FIFO or a device would hang
    if path.endswith(".csv"):
        return "sweep", read_sweep_table(path)
    obj = load_json_file(path, "plot input")
    schema = obj.get("schema") if isinstance(obj, dict) else None
    if schema == "swaplab.result/1":
        from .results import load_result
        return "result", load_result(path)
    if schema == "swaplab.history/1":
        return "history", obj
    if schema == "swaplab.bench/1" and obj.get("bench") == "threads":
        return "bench-threads", obj
    raise ParamError(f"'{shown_path(path)}' is not something swaplab plot draws (a result, history, sweep or "
                     f"bench threads file)")


def history_figure(h: dict):
    from .history import describe
    lines = [(r["policy"], r["series"]) for r in h["rows"]]
    return fallback_figure(lines, h["sizes_kb"], f"mTHP swap-out fallback per iteration, by policy: "
                                                 f"{h['workload']}", describe(h) + " (model)")


def add_parsers(sub) -> None:
    p = sub.add_parser("plot", help="draw results, histories, sweeps, bench threads (matplotlib)",
                       description="Draws a picture of the inputs: results -> fallback per iteration "
                                   "(--kind clusters: a model run's cluster states, --kind slots with "
                                   "--layout: the slot map); a history -> fallback per policy; a sweep "
                                   "directory or table.csv -> heat map; bench threads JSON files -> "
                                   "speedup. Needs matplotlib (the [plot] extra).")
    p.add_argument("inputs", nargs="+", metavar="INPUT", help="result, history or bench threads JSON, "
                                                             "or a sweep directory / table.csv")
    p.add_argument("-o", "--output", required=True, metavar="FILE", help="FILE.png, FILE.svg or FILE.pdf")
    p.add_argument("--kind", choices=KINDS, default=None, help="the picture (default: from the inputs)")
    p.add_argument("--layout", metavar="PATH", help="--kind slots: the run's --layout-dump")
    p.add_argument("--size", metavar="KB", default=None, help="heatmap: one mTHP size in kB (default: all)")
    p.add_argument("--value", default="mean_fallback_pct",
                   help="heatmap: the table column (default mean_fallback_pct)")
    p.set_defaults(func=main)


def main(a) -> int:
    check_outputs([("-o", a.output)], stdout_ok=(),
                  inputs=[(f"input '{p}'", p) for p in [*a.inputs, a.layout] if p])
    check_plot_path(a.output)
    loaded = [(p, *load_input(p)) for p in a.inputs]
    kinds = {k for _, k, _ in loaded}
    if len(kinds) > 1:
        raise ParamError("plot inputs must be of one kind: " + ", ".join(sorted(kinds)))
    kind = kinds.pop()
    allowed = {"result": ["fallback", "clusters", "slots"], "history": ["fallback"],
               "sweep": ["heatmap"], "bench-threads": ["speedup"]}[kind]
    want = a.kind or allowed[0]
    if want not in allowed:
        raise ParamError(f"--kind {want} does not draw a {kind} (it draws: {', '.join(allowed)})")
    if want in ("clusters", "slots", "heatmap") and len(loaded) > 1:
        raise ParamError(f"--kind {want} draws one input, not {len(loaded)}")
    if want == "slots" and not a.layout:
        raise ParamError("--kind slots needs --layout (the run's --layout-dump)")
    if want != "slots" and a.layout:
        raise ParamError("--layout goes with --kind slots")
    if want == "fallback" and kind == "result":
        fig = results_fallback_figure([(p, d) for p, _, d in loaded])
    elif want == "fallback":
        if len(loaded) > 1:
            raise ParamError("a history plot draws one history")
        fig = history_figure(loaded[0][2])
    elif want == "heatmap":
        fig = heatmap_figure(loaded[0][2], a.value, a.size)
    elif want == "clusters":
        fig = cluster_map_figure(loaded[0][2])
    elif want == "slots":
        from .compare import read_layout
        fig = slot_map_figure(loaded[0][2], read_layout(a.layout, loaded[0][2], "--layout"))
    else:
        fig = speedup_figure([d for _, _, d in loaded])
    save(fig, a.output, "-o")
    return 0
