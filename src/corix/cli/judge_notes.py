"""Beside every LLM judge's rates: how far the judge agrees with people (the core's figure)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.text import Text

from corix.cli.common import console

if TYPE_CHECKING:
    from corix.measurement.judges import JudgeAgreement


def print_judge_agreement(agreements: Sequence[JudgeAgreement]) -> None:
    """One line per harm the LLM judge rated: its κ, and a warning when it is low."""
    for agreement in agreements:
        if agreement.low:
            console.print(Text(f"⚠ {agreement.sentence()}", style="yellow"), soft_wrap=True)
        else:
            console.print(Text(agreement.sentence(), style="dim"), soft_wrap=True)
