"""A run's summary and the usage it adds up: typed, versioned, stored as one JSON document.

The run's row keeps :class:`RunSummary` as JSON (``model_dump(mode="json")``) and every
reader gets it back through ``RunSummary.model_validate``, which upgrades what older corix
versions stored (no ``schema_version``: usage keys flat beside the counts).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, ConfigDict, model_validator

from corix.domain.sequential import SequentialSummary

__all__ = ["RUN_SUMMARY_VERSION", "Invocation", "RunSummary", "RunUsage"]

RUN_SUMMARY_VERSION = 1


class RunUsage(BaseModel):
    """Model calls, retries, tokens and cost counted by the client layer in one process.

    Usage adds up like HELM's ``Stat``: ``a + b`` is associative with ``RunUsage()`` as its
    zero, so parts counted in several processes (Ray workers) and invocations (resumes)
    merge in any grouping. Simulator tokens only: application tokens are counted from the
    stored turns.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    model_calls: int = 0
    retries: int = 0
    waited_s: float = 0.0
    cache_hits: int = 0
    failed_calls: int = 0
    simulator_prompt_tokens: int = 0
    simulator_completion_tokens: int = 0
    cost: float = 0.0
    worker_cpu_s: float = 0.0
    """CPU spent by Ray workers (0 for a run on this event loop)."""

    def __add__(self, other: RunUsage) -> RunUsage:
        return RunUsage(
            **{name: getattr(self, name) + getattr(other, name) for name in RunUsage.model_fields}
        )

    @classmethod
    def merge(cls, parts: Iterable[RunUsage]) -> RunUsage:
        total = cls()
        for part in parts:
            total = total + part
        return total

    def rounded(self) -> RunUsage:
        """Seconds and cost to the places stored (sums of floats gather noise)."""
        return self.model_copy(
            update={
                "waited_s": round(self.waited_s, 3),
                "cost": round(self.cost, 6),
                "worker_cpu_s": round(self.worker_cpu_s, 3),
            }
        )


USAGE_KEYS = frozenset(RunUsage.model_fields)


class Invocation(BaseModel):
    """One process's go at the run (the first, then each resume): how it ended and what
    it used. An invocation killed with -9 never reports one; its rows still count."""

    model_config = ConfigDict(frozen=True)

    status: str
    started_at: str
    usage: RunUsage = RunUsage()
    wall_s: float = 0.0

    @model_validator(mode="before")
    @classmethod
    def _nest_usage(cls, data: Any) -> Any:
        return _nested_usage(data)


class RunSummary(BaseModel):
    """A whole run, resumes included: rows counted in the database, usage summed over its
    invocations, and what stopped it short. Keys it does not know (stored by another
    corix version) are left out when read."""

    model_config = ConfigDict(frozen=True)

    schema_version: int = RUN_SUMMARY_VERSION
    sessions: int = 0
    failed_sessions: int = 0
    turns: int = 0
    error_turns: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    """Application tokens, from the stored turns."""
    usage: RunUsage = RunUsage()
    wall_s: float = 0.0
    invocations: tuple[Invocation, ...] = ()
    error: str | None = None
    missing_sessions: int = 0
    """Work items that ran but whose session the database did not keep complete."""
    refused_records: tuple[str, ...] = ()
    sequential: SequentialSummary | None = None
    """A run made in waves: its stopping rule, its cells and each group's dialogues."""

    @model_validator(mode="before")
    @classmethod
    def _upgrade(cls, data: Any) -> Any:
        """Version-less summaries (before schema 1) kept usage keys flat; nest them."""
        if isinstance(data, dict) and "schema_version" not in data:
            return {**_nested_usage(data), "schema_version": RUN_SUMMARY_VERSION}
        return data


def _nested_usage(data: Any) -> Any:
    """``data`` with flat usage keys (as stored before schema 1) moved under ``usage``."""
    if not isinstance(data, dict) or "usage" in data:
        return data
    flat = {key: value for key, value in data.items() if key in USAGE_KEYS}
    rest = {key: value for key, value in data.items() if key not in USAGE_KEYS}
    return {**rest, "usage": flat}
