"""The run summary and its usage record: mergeable, versioned, read back as written."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from corix.domain import Invocation, RunSummary, RunUsage, SequentialSummary
from corix.domain.runs import RUN_SUMMARY_VERSION

# Floats that are sums of powers of two add exactly, so grouping cannot change a digit.
A = RunUsage(model_calls=3, retries=1, waited_s=0.5, cost=0.125, simulator_prompt_tokens=40)
B = RunUsage(model_calls=5, cache_hits=2, failed_calls=1, cost=0.25, worker_cpu_s=1.5)
C = RunUsage(model_calls=7, retries=2, waited_s=0.25, simulator_completion_tokens=9)


def test_usage_adds_field_by_field() -> None:
    summed = A + B
    assert summed == RunUsage(
        model_calls=8,
        retries=1,
        waited_s=0.5,
        cache_hits=2,
        failed_calls=1,
        simulator_prompt_tokens=40,
        cost=0.375,
        worker_cpu_s=1.5,
    )


def test_usage_merges_in_any_grouping_with_an_empty_record_as_zero() -> None:
    assert (A + B) + C == A + (B + C)
    assert A + RunUsage() == RunUsage() + A == A
    assert RunUsage.merge([A, B, C]) == RunUsage.merge([A, RunUsage.merge([B, C])]) == A + B + C
    assert RunUsage.merge([]) == RunUsage()


def test_usage_is_frozen_and_refuses_unknown_counters() -> None:
    with pytest.raises(ValidationError):
        A.model_calls = 0  # type: ignore[misc]
    with pytest.raises(ValidationError):
        RunUsage.model_validate({"model_cals": 1})


def test_rounding_keeps_the_stored_places() -> None:
    noisy = RunUsage(waited_s=0.1 + 0.2, cost=0.1 + 0.2, worker_cpu_s=1.23456)
    assert noisy.rounded() == RunUsage(waited_s=0.3, cost=0.3, worker_cpu_s=1.235)


OLD_SUMMARY: dict[str, Any] = {
    # As corix stored it before schema 1: usage keys flat beside the counts, optional keys
    # only when set, an invocation of a Ray run with its workers' CPU.
    "sessions": 6,
    "failed_sessions": 1,
    "turns": 18,
    "error_turns": 2,
    "prompt_tokens": 900,
    "completion_tokens": 300,
    "model_calls": 24,
    "retries": 3,
    "waited_s": 1.5,
    "cache_hits": 4,
    "failed_calls": 1,
    "simulator_prompt_tokens": 120,
    "simulator_completion_tokens": 60,
    "cost": 0.0042,
    "wall_s": 12.5,
    "invocations": [
        {
            "status": "interrupted",
            "started_at": "2026-01-02T03:04:05+00:00",
            "model_calls": 10,
            "retries": 1,
            "waited_s": 0.5,
            "cache_hits": 0,
            "failed_calls": 0,
            "simulator_prompt_tokens": 50,
            "simulator_completion_tokens": 25,
            "cost": 0.002,
            "worker_cpu_s": 2.25,
            "wall_s": 5.0,
        },
        {"status": "complete", "started_at": "2026-01-02T04:00:00+00:00", "wall_s": 7.5},
    ],
    "error": "the database stopped taking writes",
    "missing_sessions": 2,
    "sequential": {"rule": "gate", "dialogues_per_group": {"app/s/model_testing": 8}},
}


def test_a_version_less_summary_is_upgraded_when_read() -> None:
    summary = RunSummary.model_validate(OLD_SUMMARY)
    assert summary.schema_version == RUN_SUMMARY_VERSION == 1
    assert (summary.sessions, summary.failed_sessions, summary.turns) == (6, 1, 18)
    assert (summary.prompt_tokens, summary.completion_tokens) == (900, 300)
    assert summary.usage == RunUsage(
        model_calls=24,
        retries=3,
        waited_s=1.5,
        cache_hits=4,
        failed_calls=1,
        simulator_prompt_tokens=120,
        simulator_completion_tokens=60,
        cost=0.0042,
    )
    assert summary.wall_s == 12.5
    first, second = summary.invocations
    assert first == Invocation(
        status="interrupted",
        started_at="2026-01-02T03:04:05+00:00",
        usage=RunUsage(
            model_calls=10,
            retries=1,
            waited_s=0.5,
            simulator_prompt_tokens=50,
            simulator_completion_tokens=25,
            cost=0.002,
            worker_cpu_s=2.25,
        ),
        wall_s=5.0,
    )
    assert second.usage == RunUsage() and second.wall_s == 7.5
    assert summary.error == "the database stopped taking writes"
    assert summary.missing_sessions == 2 and summary.refused_records == ()
    assert summary.sequential == SequentialSummary(
        rule="gate", dialogues_per_group={"app/s/model_testing": 8}
    )


def test_an_empty_summary_of_a_run_still_running_reads_as_zeros() -> None:
    assert RunSummary.model_validate({}) == RunSummary()


def test_the_summary_reads_back_what_it_wrote() -> None:
    summary = RunSummary.model_validate(OLD_SUMMARY)
    written = summary.model_dump(mode="json")
    assert written["schema_version"] == 1 and written["usage"]["model_calls"] == 24
    assert "model_calls" not in written and "model_calls" not in written["invocations"][0]
    assert RunSummary.model_validate(written) == summary
