"""Counting what an annotation run did, and the summary it reports."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from pydantic import BaseModel


class TargetCounts(BaseModel):
    """What happened to one target (category or harm) over the run."""

    stored: int = 0
    failed: int = 0
    already_stored: int = 0
    not_applicable: int = 0
    gated_out: int = 0
    repeats_saved: int = 0
    cut_replies: int = 0
    """Passes whose last reply was cut at the judge's token limit (``finish_reason: length``)."""
    cut_dialogues: int = 0
    """Passes whose dialogue was cut to fit the judge's context window (recorded rule)."""


class AnnotationSummary(BaseModel):
    run_id: str
    annotator: str
    """The registry name asked for (``reference``, ``llm``…)."""
    stored_as: str
    """The name passes are stored under (``reference``, ``llm:<model>``)."""
    sessions: int
    passes_stored: int
    passes_failed: int
    passes_already_stored: int
    consensus_rows: int
    prompt_tokens: int
    completion_tokens: int
    model_calls: int
    wall_s: float
    by_target: dict[str, TargetCounts]
    judge_noise: float | None = None
    """With adaptive repeats, the judge noise their stopping rule assumed: the pilot's
    measurement, or ``judge_noise`` as asked when the pilot gave too few pairs."""


@dataclass
class AnnotationTally:
    """Running counts, updated by the session workers as they go."""

    targets: defaultdict[str, TargetCounts] = field(
        default_factory=lambda: defaultdict(TargetCounts)
    )
    consensus_rows: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    model_calls: int = 0
    sessions: int = 0
    judge_noise: float | None = None

    def add(self, other: AnnotationTally) -> None:
        """Count ``other``'s work too (a Ray worker's chunk)."""
        for target, counts in other.targets.items():
            into = self.targets[target]
            for name, value in counts:
                setattr(into, name, getattr(into, name) + value)
        self.consensus_rows += other.consensus_rows
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.model_calls += other.model_calls
        self.sessions += other.sessions

    def summary(
        self, *, run_id: str, annotator: str, stored_as: str, wall_s: float
    ) -> AnnotationSummary:
        targets = dict(sorted(self.targets.items()))
        return AnnotationSummary(
            run_id=run_id,
            annotator=annotator,
            stored_as=stored_as,
            sessions=self.sessions,
            passes_stored=sum(c.stored for c in targets.values()),
            passes_failed=sum(c.failed for c in targets.values()),
            passes_already_stored=sum(c.already_stored for c in targets.values()),
            consensus_rows=self.consensus_rows,
            prompt_tokens=self.prompt_tokens,
            completion_tokens=self.completion_tokens,
            model_calls=self.model_calls,
            wall_s=round(wall_s, 3),
            by_target=targets,
            judge_noise=self.judge_noise,
        )
