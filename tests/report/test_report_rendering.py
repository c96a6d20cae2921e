"""Rendering pieces: the radar, the colour scales, number formats, anchors, Markdown escaping."""

from __future__ import annotations

import math

from corix.report.anchors import anchor, node_anchor, session_anchor
from corix.report.colors import EMPTY_COLOUR, correlation_colour, ink_on, risk_colour
from corix.report.formatting import EMPTY, interval, number, p_equals, percent
from corix.report.markdown import md
from corix.report.svg import RadarSeries, radar_svg


def _series(name: str, values: list[float | None]) -> RadarSeries:
    return RadarSeries(
        name=name,
        colour="#0072b2",
        values=values,
        lows=[None if v is None else v - 1 for v in values],
        highs=[None if v is None else v + 1 for v in values],
        counts=[3 for _ in values],
        links=[f"n.t.{name}.{i}" for i in range(len(values))],
    )


def test_radar_draws_a_point_per_value_and_none_for_an_empty_axis() -> None:
    svg = radar_svg(
        ["Safety", "Privacy", "Validity", "Experience"],
        [_series("full", [1.0, 2.0, 3.0, 4.0]), _series("gappy", [5.0, None, 6.0, 7.0])],
        low=0,
        high=10,
        title="t",
    )
    assert svg.count('class="point"') == 7
    assert svg.count('class="whisker"') == 7
    assert svg.count('class="empty-point"') == 1
    assert "gappy · Privacy: empty (no evidence)" in svg
    # The full series closes its outline; the gappy one joins only neighbours with values:
    # Validity–Experience and Experience–Safety.
    assert svg.count('class="series"') == 1
    assert svg.count('class="series-edge"') == 2


def test_radar_point_sits_at_its_value_on_the_axis() -> None:
    svg = radar_svg(
        ["Up", "Right", "Down"], [_series("a", [5.0, 0.0, 10.0])], low=0, high=10, title="t"
    )
    # The first axis points up from the centre (320, 224) with radius 145: 5 of 10 → y = 151.5.
    assert 'cx="320.0" cy="151.5"' in svg


def test_radar_escapes_names_and_labels() -> None:
    svg = radar_svg(
        ["<b>Risk</b>"], [_series("<script>x</script>", [3.0])], low=0, high=10, title="<t>"
    )
    assert "<script>" not in svg and "<b>" not in svg
    assert "&lt;script&gt;x&lt;/script&gt;" in svg


def test_risk_colours_run_from_green_to_red_and_grey_when_empty() -> None:
    assert risk_colour(0.0, 0, 10) == "#1a9850"
    assert risk_colour(10.0, 0, 10) == "#a50026"
    assert risk_colour(5.0, 0, 10) == "#fee08b"
    assert risk_colour(None, 0, 10) == EMPTY_COLOUR
    assert risk_colour(math.nan, 0, 10) == EMPTY_COLOUR
    assert correlation_colour(-1.0) == "#d95f02" and correlation_colour(1.0) == "#2c7fb8"
    assert ink_on("#a50026") == "#ffffff" and ink_on("#fee08b") == "#000000"


def _contrast(first: str, second: str) -> float:
    """WCAG 2's contrast ratio, from its definition of relative luminance."""

    def luminance(colour: str) -> float:
        channels = [int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
        linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
        return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]

    high, low = sorted((luminance(first), luminance(second)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def test_text_on_every_chip_colour_meets_wcag_aa() -> None:
    # The scale's orange (#e0523c) read 4.07:1 in the old dark ink #1d2330: axe's finding.
    assert _contrast("#e0523c", "#1d2330") < 4.5
    assert ink_on("#e0523c") == "#000000" and _contrast("#e0523c", "#000000") > 5.4
    scale = [risk_colour(step / 100, 0, 1) for step in range(101)]
    scale += [correlation_colour(step / 50 - 1) for step in range(101)] + [EMPTY_COLOUR]
    assert min(_contrast(colour, ink_on(colour)) for colour in scale) >= 4.5


def test_numbers_print_empty_as_a_dash_never_zero() -> None:
    assert number(None) == EMPTY and number(math.nan) == EMPTY and number(0.0) == "0.0"
    assert interval(None, 1.0) == "" and interval(0.25, 1.0) == "[0.2, 1.0]"
    assert percent(0.125, 1) == "12.5%" and percent(None) == EMPTY
    assert p_equals(0.0004) == "p < 0.001" and p_equals(0.0342) == "p = 0.034"


def test_anchors_are_unique_and_safe() -> None:
    assert session_anchor("0487fb94") == "s.0487fb94"
    assert node_anchor("aria_pilot", "beta", "privacy@red_teaming") == (
        "n.aria_pilot.beta.privacy@red_teaming"
    )
    spaced, dashed = anchor("g", "my app"), anchor("g", "my-app")
    assert spaced != dashed and " " not in spaced
    assert anchor("g", "a.b") != anchor("g", "a", "b")


def test_markdown_escaping_keeps_names_as_text() -> None:
    assert md("a|b") == r"a\|b"
    assert md("[x](http://e)") == r"\[x\](http://e)"
    assert md("line\nbreak") == "line break"
