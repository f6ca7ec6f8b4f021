"""Printed tables. Nothing parses these: results go to JSON."""
from __future__ import annotations

import sys


def size_label(kb: int) -> str:
    return f"{kb}K" if kb < 1024 else f"{kb // 1024}M"


def print_run(res: dict, out=sys.stdout, fmt: str = "table") -> None:
    """The whole run at once: the header, every iteration, the summary
    (table), or the published tool's lines only (published)."""
    if fmt == "table":
        print_run_header(res, out)
    for it in res["iterations"]:
        print(iteration_text(it, res["sizes_kb"], fmt), file=out)
    if fmt == "table":
        print_summary(res, out)


def print_run_header(res: dict, out=sys.stdout) -> None:
    """The table's two header lines; res needs source, policy, workload,
    params and sizes_kb only (a run that has not started has them)."""
    sizes = res["sizes_kb"]
    head = f"{'iter':>5}"
    for kb in sizes:
        lab = size_label(kb)
        head += f" | {lab + ' swpout':>12} {'fallback':>9} {'fallback%':>9}"
    print(f"# {res['source']} {res['policy']} {res['workload']} "
          f"swap={res['params']['swap_bytes'] // (1 << 20)}M mthp={','.join(map(size_label, sizes))}"
          f"{' -s' if res['params']['small_folios'] else ''}{' -a' if res['params']['aligned_swapin'] else ''}"
          f" seed={res['params']['seed']} rng={res['params']['rng']}", file=out)
    print(head, file=out)


def published_pct(swpout: int, fallback: int) -> str:
    """The published program's percentage: fallback / (fallback + swpout) * 100
    with printf's %.2f, so an iteration without swap-out prints nan (0/0)."""
    total = swpout + fallback
    return f"{100.0 * fallback / total:.2f}" if total else "nan"


def iteration_text(it: dict, sizes: list, fmt: str = "table") -> str:
    """One iteration (a result's iteration dict) as text: the table's row,
    or (published) the published test program's line, one per size with
    the size appended when several are enabled."""
    if fmt == "published":
        lines = []
        for kb in sizes:
            s = it["sizes"][str(kb)]
            lines.append(f"Iteration {it['iteration']}: swpout inc: {s['swpout']}, swpout fallback inc: "
                         f"{s['swpout_fallback']}, Fallback percentage: "
                         f"{published_pct(s['swpout'], s['swpout_fallback'])}%"
                         + (f" ({size_label(kb)})" if len(sizes) > 1 else ""))
        return "\n".join(lines)
    line = f"{it['iteration']:>5}"
    for kb in sizes:
        s = it["sizes"][str(kb)]
        line += f" | {s['swpout']:>12} {s['swpout_fallback']:>9} {s['fallback_pct']:>8.2f}%"
    return line


def print_summary(res: dict, out=sys.stdout) -> None:
    for kb in res["sizes_kb"]:
        s = res["summary"][str(kb)]
        print(f"summary {size_label(kb)}: mean fallback {s['mean_fallback_pct']:.2f}%, "
              f"max {s['max_fallback_pct']:.2f}%, last 10 {s['last10_mean_fallback_pct']:.2f}%, "
              f"swpout {s['swpout']}, fallback {s['swpout_fallback']}", file=out)
    for d in res.get("swap_devices", []):
        ok = d["alloc_ok"]
        print(f"swap device {d['type']} ({d['kind']}, {d['bytes'] // (1 << 20)}M, prio {d['prio']}): "
              f"{ok[0]} order-0 and {sum(ok[1:])} large allocations, "
              f"{res['iterations'][-1]['inuse_pages_by_device'][d['type']]} slots in use at the end",
              file=out)
    print(f"layout hash {res['layout']['hash']} over {res['layout']['npages']} pages, "
          f"{res['seconds'] * 1000:.1f} ms", file=out)


def print_table(rows: list, cols: list, out=sys.stdout) -> None:
    """rows: list of dicts; cols: list of (key, header, format)."""
    widths = []
    cells = []
    for r in rows:
        cells.append([fmt.format(r[k]) if r.get(k) is not None else "-" for k, _, fmt in cols])
    for i, (_, h, _) in enumerate(cols):
        widths.append(max([len(h)] + [len(c[i]) for c in cells]))
    print("  ".join(h.rjust(w) for (_, h, _), w in zip(cols, widths)), file=out)
    for c in cells:
        print("  ".join(v.rjust(w) for v, w in zip(c, widths)), file=out)
