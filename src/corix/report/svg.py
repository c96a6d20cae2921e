"""Hand-written inline SVG: radar charts of a tree's dimensions, and the risk legend.

Inline SVG keeps the report a single small file that opens offline and runs no script;
every text is escaped here, since application names and labels come from configuration.
An empty dimension draws no point: the outline breaks there and the axis says so.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from markupsafe import Markup

from corix.report.colors import EMPTY_COLOUR, risk_legend_stops
from corix.report.formatting import interval, number

_LABEL_WIDTH = 18  # characters per line of an axis label


@dataclass(frozen=True)
class RadarSeries:
    """One application on a radar: per axis its value, interval, count and link target."""

    name: str
    colour: str
    values: Sequence[float | None]
    lows: Sequence[float | None]
    highs: Sequence[float | None]
    counts: Sequence[int]
    links: Sequence[str]


@dataclass(frozen=True)
class _Geometry:
    cx: float
    cy: float
    radius: float
    low: float
    high: float
    n_axes: int

    def angle(self, axis: int) -> float:
        return -math.pi / 2 + 2 * math.pi * axis / self.n_axes

    def point(self, axis: int, value: float, offset: float = 0.0) -> tuple[float, float]:
        share = min(1.0, max(0.0, (value - self.low) / (self.high - self.low)))
        angle = self.angle(axis)
        distance = share * self.radius
        # ``offset`` shifts perpendicular to the axis, so overlapping whiskers stay apart.
        return (
            self.cx + distance * math.cos(angle) - offset * math.sin(angle),
            self.cy + distance * math.sin(angle) + offset * math.cos(angle),
        )


def radar_svg(
    axes: Sequence[str],
    series: Sequence[RadarSeries],
    *,
    low: float,
    high: float,
    title: str,
    compact: bool = False,
) -> Markup:
    """A radar of ``axes`` (labels) with one outline per series; ``compact`` for small
    multiples (smaller canvas, no ring labels)."""
    width, height = (400, 290) if compact else (640, 440)
    radius = 88.0 if compact else 145.0
    geometry = _Geometry(width / 2, height / 2 + 4, radius, low, high, max(1, len(axes)))
    parts = _grid(geometry, axes, compact)
    for index, one in enumerate(series):
        offset = (index - (len(series) - 1) / 2) * 4.0
        parts.extend(_series(geometry, one, axes, offset))
    # A group, not an image: its points are links to the tree's rows, and an image may not
    # hold interactive elements.
    return Markup(
        '<svg class="radar" viewBox="0 0 {} {}" role="group" aria-label="{}">'
        "<title>{}</title>{}</svg>"
    ).format(width, height, title, title, Markup("").join(parts))


def _grid(geometry: _Geometry, axes: Sequence[str], compact: bool) -> list[Markup]:
    parts = []
    rings = 5
    for ring in range(1, rings + 1):
        value = geometry.low + (geometry.high - geometry.low) * ring / rings
        corners = [geometry.point(axis, value) for axis in range(geometry.n_axes)]
        parts.append(Markup('<polygon class="ring" points="{}"/>').format(_points(corners)))
        if not compact:
            x, y = geometry.point(0, value)
            parts.append(
                Markup('<text class="ring-label" x="{}" y="{}">{}</text>').format(
                    _n(x + 4), _n(y + 3), f"{value:g}"
                )
            )
    for axis, label in enumerate(axes):
        x, y = geometry.point(axis, geometry.high)
        parts.append(
            Markup('<line class="axis" x1="{}" y1="{}" x2="{}" y2="{}"/>').format(
                _n(geometry.cx), _n(geometry.cy), _n(x), _n(y)
            )
        )
        parts.append(_axis_label(geometry, axis, label, compact))
    return parts


def _axis_label(geometry: _Geometry, axis: int, label: str, compact: bool) -> Markup:
    angle = geometry.angle(axis)
    distance = geometry.radius + (14 if compact else 18)
    x = geometry.cx + distance * math.cos(angle)
    y = geometry.cy + distance * math.sin(angle)
    cos = math.cos(angle)
    anchor = "middle" if abs(cos) < 0.3 else ("start" if cos > 0 else "end")
    lines = _wrap(label, _LABEL_WIDTH)
    line_height = 12 if compact else 14
    # Labels above the centre grow upwards, so they never cover the chart.
    first = y - (len(lines) - 1) * line_height if math.sin(angle) < -0.3 else y
    spans = Markup("").join(
        Markup('<tspan x="{}" y="{}">{}</tspan>').format(_n(x), _n(first + i * line_height), line)
        for i, line in enumerate(lines)
    )
    return Markup('<text class="axis-label" text-anchor="{}">{}</text>').format(anchor, spans)


def _series(
    geometry: _Geometry, series: RadarSeries, axes: Sequence[str], offset: float
) -> list[Markup]:
    colour = series.colour
    points = [
        geometry.point(axis, value) if value is not None else None
        for axis, value in enumerate(series.values)
    ]
    parts = []
    present = [p for p in points if p is not None]
    if len(present) == len(points) >= 3:
        parts.append(
            Markup('<polygon class="series" points="{}" style="stroke:{};fill:{}"/>').format(
                _points(present), colour, colour
            )
        )
    elif len(points) > 1:
        # Join neighbouring axes that both have a value; an empty axis breaks the outline.
        for axis, start in enumerate(points):
            end = points[(axis + 1) % len(points)]
            if start is not None and end is not None:
                parts.append(
                    Markup(
                        '<line class="series-edge" x1="{}" y1="{}" x2="{}" y2="{}" '
                        'style="stroke:{}"/>'
                    ).format(_n(start[0]), _n(start[1]), _n(end[0]), _n(end[1]), colour)
                )
    for axis, value in enumerate(series.values):
        parts.append(_marker(geometry, series, axes, axis, value, offset))
    return parts


def _marker(
    geometry: _Geometry,
    series: RadarSeries,
    axes: Sequence[str],
    axis: int,
    value: float | None,
    offset: float,
) -> Markup:
    """A point with its interval whisker and tooltip, or a hollow mark for an empty axis."""
    if value is None:
        x, y = geometry.point(axis, geometry.low)
        return Markup(
            '<circle class="empty-point" cx="{}" cy="{}" r="3"><title>{}</title></circle>'
        ).format(_n(x), _n(y), f"{series.name} · {axes[axis]}: empty (no evidence)")
    low, high = series.lows[axis], series.highs[axis]
    whisker = Markup("")
    if low is not None and high is not None:
        (x1, y1), (x2, y2) = geometry.point(axis, low, offset), geometry.point(axis, high, offset)
        whisker = Markup(
            '<line class="whisker" x1="{}" y1="{}" x2="{}" y2="{}" style="stroke:{}"/>'
        ).format(_n(x1), _n(y1), _n(x2), _n(y2), series.colour)
    x, y = geometry.point(axis, value)
    tip = (
        f"{series.name} · {axes[axis]}: {number(value)} {interval(low, high)} "
        f"n = {series.counts[axis]}"
    )
    return whisker + Markup(
        '<a href="#{}"><circle class="point" cx="{}" cy="{}" r="4.5" style="fill:{}">'
        "<title>{}</title></circle></a>"
    ).format(series.links[axis], _n(x), _n(y), series.colour, tip)


def risk_legend_svg(low: float, high: float, *, gradient_id: str) -> Markup:
    """A horizontal colour bar from ``low`` (less risk) to ``high`` (more risk)."""
    stops = Markup("").join(
        Markup('<stop offset="{}%" stop-color="{}"/>').format(f"{share * 100:.0f}", colour)
        for share, colour in risk_legend_stops()
    )
    ticks = Markup("")
    for i in range(6):
        share = i / 5
        x = _n(10 + share * 260)
        ticks += Markup(
            '<line class="tick" x1="{}" y1="24" x2="{}" y2="28"/>'
            '<text class="tick-label" x="{}" y="40" text-anchor="middle">{}</text>'
        ).format(x, x, x, f"{low + (high - low) * share:g}")
    return Markup(
        '<svg class="legend" viewBox="0 0 380 46" role="img"><title>Risk colour scale</title>'
        '<defs><linearGradient id="{}">{}</linearGradient></defs>'
        '<rect x="10" y="8" width="260" height="16" rx="3" fill="url(#{})"/>{}'
        '<rect x="292" y="8" width="16" height="16" rx="3" fill="{}"/>'
        '<text class="tick-label" x="314" y="20">empty</text></svg>'
    ).format(gradient_id, stops, gradient_id, ticks, EMPTY_COLOUR)


def _points(points: Sequence[tuple[float, float]]) -> str:
    return " ".join(f"{x:.1f},{y:.1f}" for x, y in points)


def _n(value: float) -> str:
    return f"{value:.1f}"


def _wrap(text: str, width: int) -> list[str]:
    lines: list[str] = []
    for word in text.split():
        if lines and len(lines[-1]) + 1 + len(word) <= width:
            lines[-1] += f" {word}"
        else:
            lines.append(word)
    return lines or [""]
