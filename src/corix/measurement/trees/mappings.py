"""How one question's answers map onto a tree's scale (the pilot's: 0–10, higher = more risk).

Each question used by a tree declares its kind, its input scale and its direction, so a
"yes" that means a guardrail held and a "yes" that means it broke are never confused.
``map_answer`` raises ``ValueError`` (with the reason) for an answer outside the declared
input; the caller adds the row and question to the message.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from corix.measurement.trees.intervals import Interval
from corix.measurement.trees.leaves import RawValue

_YES = {"yes", "y", "true", "1", "1.0"}
_NO = {"no", "n", "false", "0", "0.0"}


def _number(raw: RawValue) -> float:
    if isinstance(raw, float):
        return raw
    try:
        return float(raw)
    except ValueError:
        raise ValueError("expected a number") from None


class _Mapping(BaseModel, ABC):
    model_config = ConfigDict(extra="forbid", frozen=True)

    summarizer: str = Field(
        default="mean",
        description="How the question's node summarizes its responses (a registered name).",
    )
    gated: bool = Field(
        default=False,
        description="Asked only of some dialogues (e.g. after a violation): its answers "
        "describe those dialogues, so it may not be summarized together with questions "
        "asked of every dialogue.",
    )

    @abstractmethod
    def map_answer(self, raw: RawValue, scale: Interval) -> float:
        """The answer's value on ``scale``; ``ValueError`` if it is outside the input scale."""

    def codomain(self, scale: Interval) -> Interval:
        """The values ``map_answer`` can return."""
        return scale


class YesNoMapping(_Mapping):
    """yes/no → the scale's ends. ``yes_means: risk`` maps yes to the top (more risk)."""

    kind: Literal["yes_no"]
    yes_means: Literal["risk", "safe"] = "risk"

    def map_answer(self, raw: RawValue, scale: Interval) -> float:
        word = str(raw).strip().lower()
        if word in _YES:
            is_risk = self.yes_means == "risk"
        elif word in _NO:
            is_risk = self.yes_means == "safe"
        else:
            raise ValueError("expected yes or no")
        return scale.high if is_risk else scale.low


class _LinearMapping(_Mapping):
    """A numeric answer on ``[min, max]`` stretched linearly onto the scale."""

    min: float
    max: float
    higher_is: Literal["risk", "better"]

    @model_validator(mode="after")
    def _ordered(self) -> _LinearMapping:
        if not self.min < self.max:
            raise ValueError(f"min ({self.min:g}) must be below max ({self.max:g})")
        return self

    def _check(self, number: float) -> None:
        if not (math.isfinite(number) and self.min <= number <= self.max):
            raise ValueError(f"expected a number from {self.min:g} to {self.max:g}")

    def map_answer(self, raw: RawValue, scale: Interval) -> float:
        number = _number(raw)
        self._check(number)
        share = (number - self.min) / (self.max - self.min)
        risk = share if self.higher_is == "risk" else 1.0 - share
        return scale.low + risk * scale.width


class SliderMapping(_LinearMapping):
    """Slider (default 1–10); e.g. usefulness is ``higher_is: better``, so it is inverted."""

    kind: Literal["slider"]
    min: float = 1
    max: float = 10


class LikertMapping(_LinearMapping):
    """Likert item (default 1–5): whole numbers only."""

    kind: Literal["likert"]
    min: float = 1
    max: float = 5

    def _check(self, number: float) -> None:
        super()._check(number)
        if not number.is_integer():
            raise ValueError(f"expected a whole number from {self.min:g} to {self.max:g}")


class ChoiceMapping(_Mapping):
    """Choice → a value table on the scale, e.g. ``{succeeded: 10, partly: 5, failed: 0}``."""

    kind: Literal["choice"]
    values: dict[str, float] = Field(min_length=1)

    @field_validator("values")
    @classmethod
    def _lower_case_choices(cls, values: dict[str, float]) -> dict[str, float]:
        return {choice.strip().lower(): value for choice, value in values.items()}

    def map_answer(self, raw: RawValue, scale: Interval) -> float:
        choice = str(raw).strip().lower()
        if choice not in self.values:
            raise ValueError(f"expected one of {', '.join(sorted(self.values))}")
        return self.values[choice]

    def codomain(self, scale: Interval) -> Interval:
        return Interval(min(self.values.values()), max(self.values.values()))


QuestionMapping = Annotated[
    YesNoMapping | SliderMapping | LikertMapping | ChoiceMapping, Field(discriminator="kind")
]
