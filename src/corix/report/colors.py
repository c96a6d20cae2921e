"""Colours of the report: a risk scale, a diverging scale for correlations, series colours."""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import pairwise

RGB = tuple[float, float, float]

# Low risk green through yellow to high risk red (ColorBrewer RdYlGn, reversed).
_RISK_STOPS: tuple[tuple[float, str], ...] = (
    (0.0, "#1a9850"),
    (0.25, "#a6d96a"),
    (0.5, "#fee08b"),
    (0.75, "#f46d43"),
    (1.0, "#a50026"),
)
# Negative correlations (trade-offs) orange, positive blue (ColorBrewer PuOr-like).
_CORRELATION_STOPS: tuple[tuple[float, str], ...] = (
    (0.0, "#d95f02"),
    (0.5, "#f7f7f7"),
    (1.0, "#2c7fb8"),
)
# Okabe–Ito: distinguishable with the common forms of colour blindness.
SERIES = ("#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#000000")
EMPTY_COLOUR = "#d9dde3"


def risk_colour(value: float | None, low: float, high: float) -> str:
    """The risk scale's colour for ``value`` on ``[low, high]``; grey when empty."""
    if value is None or math.isnan(value) or high <= low:
        return EMPTY_COLOUR
    return _interpolate(_RISK_STOPS, (value - low) / (high - low))


def correlation_colour(rho: float | None) -> str:
    if rho is None or math.isnan(rho):
        return EMPTY_COLOUR
    return _interpolate(_CORRELATION_STOPS, (rho + 1) / 2)


def series_colour(index: int) -> str:
    return SERIES[index % len(SERIES)]


def ink_on(background: str) -> str:
    """Black or white text, whichever contrasts more with ``background`` (WCAG 2).

    One of the two always reaches 4.58:1 (AA asks 4.5:1); a softer dark ink would leave
    mid-tone chips (the scale's orange) below AA with either choice."""
    red, green, blue = (_linear(channel) for channel in _rgb(background))
    luminance = 0.2126 * red + 0.7152 * green + 0.0722 * blue
    on_white = 1.05 / (luminance + 0.05)
    on_black = (luminance + 0.05) / 0.05
    return "#ffffff" if on_white >= on_black else "#000000"


def risk_legend_stops(steps: int = 6) -> list[tuple[float, str]]:
    """Evenly spaced (share of the scale, colour) pairs for a legend."""
    return [(i / (steps - 1), _interpolate(_RISK_STOPS, i / (steps - 1))) for i in range(steps)]


def _interpolate(stops: Sequence[tuple[float, str]], share: float) -> str:
    share = min(1.0, max(0.0, share))
    for (left, left_colour), (right, right_colour) in pairwise(stops):
        if share <= right:
            t = (share - left) / (right - left)
            a, b = _rgb(left_colour), _rgb(right_colour)
            mixed = tuple(round(x + (y - x) * t) for x, y in zip(a, b, strict=True))
            return "#{:02x}{:02x}{:02x}".format(*mixed)
    return stops[-1][1]


def _rgb(colour: str) -> RGB:
    code = colour.lstrip("#")
    return (int(code[0:2], 16), int(code[2:4], 16), int(code[4:6], 16))


def _linear(channel: float) -> float:
    c = channel / 255
    return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4
