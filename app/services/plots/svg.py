"""A small, deterministic SVG line-chart renderer (no plotting library in the service).

:func:`line_chart` draws axes with "nice" ticks (linear or log10), axis labels, a title,
a legend and any number of series (solid or dashed lines, optional point markers; a
``None`` value breaks a line). Lines are clipped to the plot area, so a series may run
off the chosen range. The same input always gives the same bytes: coordinates are
written with one decimal, and the clip-path id is derived from the content. All text is
XML-escaped.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass
from xml.sax.saxutils import escape, quoteattr

PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2")
GREY = "#7f7f7f"
WIDTH, HEIGHT = 640, 420
LEFT, RIGHT, TOP, BOTTOM = 64, 20, 64, 52
CHAR_WIDTH = 6.5  # average width of a 12px sans-serif character, for the legend layout


@dataclass(frozen=True)
class Series:
    """One line: ``x``/``y`` values (``None`` breaks the line)."""

    name: str
    x: Sequence[float | None]
    y: Sequence[float | None]
    color: str | None = None
    dashed: bool = False
    markers: bool = False


@dataclass(frozen=True)
class Axis:
    """An axis from ``lo`` to ``hi`` (log10 scale when ``log``; then ``0 < lo``)."""

    label: str
    lo: float
    hi: float
    log: bool = False

    def fraction(self, v: float) -> float:
        if self.log:
            return (math.log10(v) - math.log10(self.lo)) / (
                math.log10(self.hi) - math.log10(self.lo)
            )
        return (v - self.lo) / (self.hi - self.lo)

    def ticks(self) -> list[float]:
        if self.log:
            first, last = (
                math.ceil(math.log10(self.lo) - 1e-9),
                math.floor(math.log10(self.hi) + 1e-9),
            )
            mantissas = (1.0,) if last - first >= 2 else (1.0, 2.0, 5.0)
            return [
                m * 10.0**e
                for e in range(first - 1, last + 1)
                for m in mantissas
                if self.lo * (1 - 1e-9) <= m * 10.0**e <= self.hi * (1 + 1e-9)
            ]
        step = nice_step((self.hi - self.lo) / 5)
        start = math.ceil(self.lo / step - 1e-9)
        return [round(k * step, 12) for k in range(start, int(self.hi / step + 1e-9) + 1)]


def nice_step(raw: float) -> float:
    """The smallest of 1, 2, 5 times a power of ten that is >= ``raw`` (> 0)."""
    if not raw > 0:
        return 1.0
    power = 10.0 ** math.floor(math.log10(raw))
    return next(m * power for m in (1.0, 2.0, 5.0, 10.0) if m * power >= raw * (1 - 1e-9))


def nice_ceiling(v: float) -> float:
    """A round upper bound for an axis that must reach ``v``."""
    if not v > 0:
        return 1.0
    step = nice_step(v / 5)
    return math.ceil(v / step - 1e-9) * step


def _num(v: float) -> str:
    return f"{v:.1f}"


def _label(v: float) -> str:
    return f"{v:.6g}"


def _text(x: float, y: float, s: str, anchor: str = "middle", extra: str = "") -> str:
    return f'<text x="{_num(x)}" y="{_num(y)}" text-anchor="{anchor}"{extra}>{escape(s)}</text>'


def _paths(s: Series, px: Axis, py: Axis, box: tuple[float, float, float, float]) -> list[str]:
    left, top, w, h = box
    color = s.color or GREY
    runs: list[list[tuple[float, float]]] = [[]]
    for x, y in zip(s.x, s.y, strict=True):
        if (
            x is not None
            and y is not None
            and math.isfinite(x)
            and math.isfinite(y)
            and (x > 0 or not px.log)
            and (y > 0 or not py.log)
        ):
            runs[-1].append((left + px.fraction(x) * w, top + h - py.fraction(y) * h))
        elif runs[-1]:
            runs.append([])
    dash = ' stroke-dasharray="6 4"' if s.dashed else ""
    out = []
    for run in runs:
        if len(run) >= 2:
            points = " ".join(f"{_num(a)},{_num(b)}" for a, b in run)
            out.append(
                f'<polyline fill="none" stroke="{color}" stroke-width="2"{dash} points="{points}"/>'
            )
        if s.markers or len(run) == 1:
            out += [f'<circle cx="{_num(a)}" cy="{_num(b)}" r="3" fill="{color}"/>' for a, b in run]
    return out


def _legend(series: Sequence[Series], left: float, right: float) -> list[tuple[float, int]]:
    """Position (x, row) of each legend entry: rows under the title, wrapped at ``right``."""
    out: list[tuple[float, int]] = []
    cursor, row = left, 0
    for s in series:
        need = 40 + CHAR_WIDTH * len(s.name)
        if cursor > left and cursor + need > right:
            cursor, row = left, row + 1
        out.append((cursor, row))
        cursor += need
    return out


def line_chart(
    title: str,
    x: Axis,
    y: Axis,
    series: Sequence[Series],
    *,
    width: int = WIDTH,
    height: int = HEIGHT,
) -> str:
    """An SVG document (``<svg>`` root, UTF-8 text) drawing ``series`` on axes ``x`` and ``y``."""
    colored = [
        s if s.color else Series(s.name, s.x, s.y, PALETTE[i % len(PALETTE)], s.dashed, s.markers)
        for i, s in enumerate(series)
    ]
    legend = _legend(colored, LEFT, width - RIGHT)
    rows = 1 + max((row for _, row in legend), default=0)
    left, top = float(LEFT), float(TOP + 16 * (rows - 1))
    w, h = float(width - LEFT - RIGHT), float(height - top - BOTTOM)
    clip = "clip-" + hashlib.sha256(repr((title, x, y, series)).encode()).hexdigest()[:10]
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" font-family="sans-serif" font-size="12">',
        f"<title>{escape(title)}</title>",
        f'<rect width="{width}" height="{height}" fill="#ffffff"/>',
        f'<clipPath id="{clip}"><rect x="{_num(left)}" y="{_num(top)}" width="{_num(w)}" '
        f'height="{_num(h)}"/></clipPath>',
        _text(width / 2, 22, title, extra=' font-size="15" font-weight="bold"'),
    ]
    grid = '<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="#e6e6e6"/>'
    for v in x.ticks():
        cx = left + x.fraction(v) * w
        parts.append(grid.format(_num(cx), _num(top), _num(cx), _num(top + h)))
        parts.append(_text(cx, top + h + 16, _label(v)))
    for v in y.ticks():
        cy = top + h - y.fraction(v) * h
        parts.append(grid.format(_num(left), _num(cy), _num(left + w), _num(cy)))
        parts.append(_text(left - 6, cy + 4, _label(v), anchor="end"))
    parts.append(
        f'<rect x="{_num(left)}" y="{_num(top)}" width="{_num(w)}" height="{_num(h)}" '
        'fill="none" stroke="#333333"/>'
    )
    parts.append(_text(left + w / 2, height - 12, x.label))
    middle = _num(top + h / 2)
    parts.append(_text(16, top + h / 2, y.label, extra=f' transform="rotate(-90 16 {middle})"'))
    parts.append(f"<g clip-path={quoteattr(f'url(#{clip})')}>")
    for s in colored:
        parts += _paths(s, x, y, (left, top, w, h))
    parts.append("</g>")
    for s, (cx, row) in zip(colored, legend, strict=True):
        ly = 44 + 16 * row
        dash = ' stroke-dasharray="6 4"' if s.dashed else ""
        parts.append(
            f'<line x1="{_num(cx)}" y1="{ly}" x2="{_num(cx + 22)}" y2="{ly}" '
            f'stroke="{s.color}" stroke-width="2"{dash}/>'
        )
        parts.append(_text(cx + 27, ly + 4, s.name, anchor="start"))
    parts.append("</svg>")
    return "\n".join(parts) + "\n"
