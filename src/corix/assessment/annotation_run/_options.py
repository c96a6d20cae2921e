"""What an annotation run is asked to do, and whom it tells about its progress."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field


@dataclass(frozen=True)
class ProgressHooks:
    """Callbacks for a progress display: sessions planned, then each session done."""

    on_planned: Callable[[int], None] | None = None
    on_session_done: Callable[[], None] | None = None


class AnnotateOptions(BaseModel):
    """How much to ask: passes, repeats, which targets, how many sessions at once."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    passes: int = Field(default=1, ge=1)
    repeats: int = Field(default=1, ge=1)
    adaptive: bool = False
    min_repeats: int = Field(default=2, ge=1)
    """In adaptive mode, the runs every item gets before it may stop."""
    max_change: float = Field(default=0.07, gt=0.0, lt=0.5)
    """In adaptive mode, an item stops once the chance that its remaining repeats would
    settle it differently is at most this (:func:`~corix.assessment.change_probability`)."""
    judge_noise: float = Field(default=0.4, gt=0.0, lt=1.0)
    """The share of random judge runs that chance assumes when the adaptive pilot's first
    two runs of each item give fewer than 30 pairs to measure it from
    (:mod:`~corix.assessment.annotation_run._pilot`)."""
    max_flip_rate: float = Field(default=0.0, ge=0.0, lt=0.5)
    """In adaptive mode, an item may also stop once its flip rate is at most this (0: off;
    a flip-rate stop carries no guarantee)."""
    categories: tuple[str, ...] | None = None
    """Schema categories to ask (default: all the annotator answers)."""
    harms: tuple[str, ...] | None = None
    """Harm packs to judge (default: all the annotator judges)."""
    concurrency: int = Field(default=16, ge=1)
    seed: int = 0
    retry_failed: bool = False
    """Delete this annotator's failed passes first, so that they are asked again."""
    max_reasks: int = Field(default=2, ge=0)
    temperature: float | None = Field(default=None, ge=0)
    """Sampling temperature of LLM annotators; repeats need some randomness to be useful."""
