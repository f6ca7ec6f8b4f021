"""Plain SVG line charts, written by hand (no plotting dependency).

line_chart_svg() draws one polyline per series with markers, axes with
round ticks, axis labels, a title and a legend, so a chart reads without the
table it came from.
"""
from __future__ import annotations

from xml.sax.saxutils import escape

PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2",
           "#17becf", "#7f7f7f", "#bcbd22"]


def nice_step(span: float, target: int = 8) -> float:
    """A 1-2-5 step that cuts span into about target pieces."""
    if span <= 0:
        return 1.0
    raw = span / target
    mag = 10 ** len(str(int(raw))) / 10 if raw >= 1 else 10 ** -len(str(int(1 / raw)))
    for m in (1, 2, 5, 10):
        if m * mag >= raw:
            return m * mag
    return 10 * mag


def _fmt(v: float) -> str:
    return f"{v:g}" if abs(v) < 1e6 else f"{v:.3g}"


def line_chart_svg(title: str, xlabel: str, ylabel: str, series: list, *, ymin: float = 0.0,
                   ymax: float | None = None, width: int = 900, height: int = 520) -> str:
    """series: [(name, [x...], [y...]), ...] -> SVG text."""
    left, right, top, bottom = 80, 230, 50, 60
    pw, ph = width - left - right, height - top - bottom
    xs = [x for _, sx, _ in series for x in sx] or [0, 1]
    ys = [y for _, _, sy in series for y in sy] or [0, 1]
    x0, x1 = min(xs), max(xs)
    if x1 == x0:
        x1 = x0 + 1
    y1 = ymax if ymax is not None else max(ys) * 1.08 or 1.0
    sx = lambda x: left + (x - x0) / (x1 - x0) * pw  # noqa: E731
    sy = lambda y: top + ph - (y - ymin) / (y1 - ymin) * ph  # noqa: E731
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="{left + pw / 2}" y="28" text-anchor="middle" font-size="15" '
           f'font-weight="bold">{escape(title)}</text>']
    step = nice_step(y1 - ymin)
    v = ymin
    while v <= y1 + 1e-9:
        y = sy(v)
        out.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + pw}" y2="{y:.1f}" stroke="#e5e5e5"/>')
        out.append(f'<text x="{left - 8}" y="{y + 4:.1f}" text-anchor="end">{_fmt(v)}</text>')
        v += step
    distinct = sorted(set(xs))
    if len(distinct) <= 12 and all(float(x).is_integer() for x in distinct):
        xticks = distinct  # thread counts and the like: the values themselves
    else:
        xstep, xticks, v = nice_step(x1 - x0, 10), [], x0
        while v <= x1 + 1e-9:
            xticks.append(v)
            v += xstep
    for v in xticks:
        x = sx(v)
        out.append(f'<line x1="{x:.1f}" y1="{top + ph}" x2="{x:.1f}" y2="{top + ph + 5}" stroke="black"/>')
        out.append(f'<text x="{x:.1f}" y="{top + ph + 20}" text-anchor="middle">{_fmt(v)}</text>')
    out.append(f'<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="black"/>')
    out.append(f'<text x="{left + pw / 2}" y="{height - 15}" text-anchor="middle">{escape(xlabel)}</text>')
    out.append(f'<text x="18" y="{top + ph / 2}" text-anchor="middle" '
               f'transform="rotate(-90 18 {top + ph / 2})">{escape(ylabel)}</text>')
    for i, (name, sxs, sys_) in enumerate(series):
        col = PALETTE[i % len(PALETTE)]
        # past the palette, the same colours come back dashed
        dash = ' stroke-dasharray="7 4"' if (i // len(PALETTE)) % 2 else ""
        pts = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in zip(sxs, sys_))
        out.append(f'<polyline class="series" fill="none" stroke="{col}" stroke-width="2"{dash} '
                   f'points="{pts}"><title>{escape(name)}</title></polyline>')
        for x, y in zip(sxs, sys_):
            out.append(f'<circle cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="3" fill="{col}"/>')
        ly = top + 10 + 20 * i
        out.append(f'<line x1="{left + pw + 15}" y1="{ly}" x2="{left + pw + 40}" y2="{ly}" '
                   f'stroke="{col}" stroke-width="3"{dash}/>')
        out.append(f'<text x="{left + pw + 46}" y="{ly + 4}">{escape(name)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"
