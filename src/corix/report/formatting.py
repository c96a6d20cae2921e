"""Numbers and names as the report prints them, shared by the HTML and Markdown renderers.

An empty value prints as an em dash, never as 0.
"""

from __future__ import annotations

import math

from corix.measurement import CellCost, SourceCost

EMPTY = "—"

COST_COLUMNS = ("Application calls", "Simulator calls", "Judge calls", "Total")
COST_NOTE = (
    "Model calls, prompt + completion tokens and cost of each source, at the prices of the "
    "run's plan (applications, simulated users) and of its annotation jobs (judges); "
    f"{EMPTY} where a price or a count is unknown."
)


def number(value: float | None, digits: int = 1) -> str:
    if value is None or math.isnan(value):
        return EMPTY
    return f"{value:.{digits}f}"


def interval(low: float | None, high: float | None, digits: int = 1) -> str:
    """``[low, high]``, or an empty string when there is no interval."""
    if low is None or high is None:
        return ""
    return f"[{low:.{digits}f}, {high:.{digits}f}]"


def node_notes(
    *,
    testers: int | None,
    warning: str | None,
    bias: float | None,
    bias_corrected: float | None,
    digits: int = 1,
) -> str:
    """What a scored node's interval rests on, and a ``max``/``min`` node's bias, as the
    measurement core stated them: ``testers=6; bias-corrected 3.1 (bias +0.4)``."""
    parts = []
    if testers is not None:
        parts.append(f"testers={testers}")
    if bias is not None and bias_corrected is not None:
        parts.append(f"bias-corrected {bias_corrected:.{digits}f} (bias {bias:+.{digits}f})")
    if warning is not None:
        parts.append(f"⚠ {warning}")
    return "; ".join(parts)


def percent(share: float | None, digits: int = 0) -> str:
    if share is None or math.isnan(share):
        return EMPTY
    return f"{share * 100:.{digits}f}%"


def percent_interval(low: float | None, high: float | None) -> str:
    if low is None or high is None:
        return ""
    return f"[{low * 100:.0f}%, {high * 100:.0f}%]"


def value_with_interval(
    value: float | None,
    bounds: tuple[float | None, float | None],
    *,
    share: bool,
    signed: bool = False,
) -> str:
    """``33.0 [26.6, 40.0]``: a share in percent (a change of shares in points) or a tree
    value, with its interval when it has one; ``corix runs compare`` and the results home
    show two runs this way."""
    if value is None:
        return EMPTY
    scale, digits = (100, 1) if share else (1, 2)
    sign = "+" if signed else ""
    shown = f"{value * scale:{sign}.{digits}f}"
    low, high = bounds
    if low is None or high is None:
        return shown
    return f"{shown} [{low * scale:{sign}.{digits}f}, {high * scale:{sign}.{digits}f}]"


def p_value(p: float | None) -> str:
    if p is None or math.isnan(p):
        return EMPTY
    return "< 0.001" if p < 0.001 else f"{p:.3f}"


def p_equals(p: float | None) -> str:
    """``p = 0.034`` or ``p < 0.001``."""
    text = p_value(p)
    return f"p {text}" if text.startswith("<") else f"p = {text}"


def signed(value: float | None, digits: int = 2) -> str:
    if value is None or math.isnan(value):
        return EMPTY
    return f"{value:+.{digits}f}"


def words(identifier: str) -> str:
    """``model_testing`` → ``model testing``."""
    return identifier.replace("_", " ")


def short_id(session_id: str) -> str:
    """The first eight characters: enough to tell a run's sessions apart when reading."""
    return session_id[:8]


def cost_parts(cost: CellCost) -> tuple[SourceCost, SourceCost, SourceCost, SourceCost]:
    """A cell's sources in the order of :data:`COST_COLUMNS`."""
    return cost.application, cost.simulator, cost.judge, cost.total


def source_usage(part: SourceCost) -> str:
    """``calls · prompt + completion tokens · cost``, with an em dash for what is unknown."""
    if part.calls is None:
        return EMPTY
    cost = EMPTY if part.cost is None else f"{part.cost:.4f}"
    return f"{part.calls} · {part.prompt_tokens} + {part.completion_tokens} · {cost}"
