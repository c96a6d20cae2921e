"""What each session attempted (its persona template or script, its exact prompt), and
what each cell of a run used (dialogues; application, simulator and judge calls, tokens).

Attacker-style rates group a run's sessions by what was tried: the same persona template
(or model-testing script) filled with different parameters, or the same prompt repeated.
Both are read from the session's stored provenance, never guessed from a work key.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, select

from corix.storage.database import Database, in_chunks
from corix.storage.orm import AnnotationPassRow, ApplicationRow, SessionRow, TurnRow

__all__ = ["CallCount", "CellUsage", "SessionAttempt", "cell_usage", "session_attempts"]


@dataclass(frozen=True, slots=True)
class SessionAttempt:
    """``template``: the persona template or script; ``prompt``: the template with its
    parameters and goal, which names one exact attempt that repeats share."""

    template: str
    prompt: str


def session_attempts(db: Database, session_ids: Sequence[str]) -> dict[str, SessionAttempt]:
    """session id → what it attempted, for the sessions whose provenance names a template."""
    found: dict[str, SessionAttempt] = {}
    with db.session() as s:
        for chunk in in_chunks(session_ids):
            query = select(SessionRow.id, SessionRow.provenance).where(SessionRow.id.in_(chunk))
            for session_id, provenance in s.execute(query):
                template = (provenance or {}).get("template")
                if not template:
                    continue
                goal = ((provenance.get("brief") or {}).get("goal")) or ""
                parameters = json.dumps(provenance.get("parameters") or {}, sort_keys=True)
                found[session_id] = SessionAttempt(
                    template=str(template), prompt=f"{template} {parameters} {goal}".rstrip()
                )
    return found


@dataclass(frozen=True, slots=True)
class CallCount:
    """Model calls and the tokens they took."""

    calls: int
    prompt_tokens: int
    completion_tokens: int


@dataclass(frozen=True, slots=True)
class CellUsage:
    """What one run's application × scenario × level used: dialogues; application calls
    (one per turn, failed ones included) and the tokens the application reported; the
    simulated users' calls; and each LLM judge's calls on the cell's dialogues. ``None``:
    not recorded for some of its sessions or passes (stored before corix recorded them)."""

    run_id: str
    application: str
    scenario: str
    level: str
    dialogues: int
    calls: int
    prompt_tokens: int
    completion_tokens: int
    simulator: CallCount | None
    judges: dict[str, CallCount | None]


_Cell = tuple[str, str, str, str]


def cell_usage(db: Database, run_ids: Sequence[str]) -> list[CellUsage]:
    """Per run × application × scenario × level, counted from the stored turns, sessions
    and annotation passes."""
    runs = list(run_ids)
    cell = (SessionRow.run_id, ApplicationRow.name, SessionRow.scenario, SessionRow.level)
    applications = (
        select(
            *cell,
            func.count(func.distinct(SessionRow.id)),
            func.count(TurnRow.id),
            func.coalesce(func.sum(TurnRow.prompt_tokens), 0),
            func.coalesce(func.sum(TurnRow.completion_tokens), 0),
        )
        .join(ApplicationRow, ApplicationRow.id == SessionRow.application_id)
        .outerjoin(TurnRow, TurnRow.session_id == SessionRow.id)
        .where(SessionRow.run_id.in_(runs))
        .group_by(*cell)
        .order_by(*cell)
    )
    simulators = (
        select(
            *cell,
            func.count(SessionRow.id) - func.count(SessionRow.simulator_calls),
            *_sums(
                SessionRow.simulator_calls,
                SessionRow.simulator_prompt_tokens,
                SessionRow.simulator_completion_tokens,
            ),
        )
        .join(ApplicationRow, ApplicationRow.id == SessionRow.application_id)
        .where(SessionRow.run_id.in_(runs))
        .group_by(*cell)
    )
    judges = (
        select(
            *cell,
            AnnotationPassRow.annotator,
            func.count(AnnotationPassRow.id) - func.count(AnnotationPassRow.model_calls),
            *_sums(
                AnnotationPassRow.model_calls,
                AnnotationPassRow.prompt_tokens,
                AnnotationPassRow.completion_tokens,
            ),
        )
        .join(SessionRow, SessionRow.id == AnnotationPassRow.session_id)
        .join(ApplicationRow, ApplicationRow.id == SessionRow.application_id)
        .where(SessionRow.run_id.in_(runs), AnnotationPassRow.annotator_kind == "llm")
        .group_by(*cell, AnnotationPassRow.annotator)
    )
    with db.session() as s:
        simulated = {tuple(row[:4]): _count(*row[4:]) for row in s.execute(simulators)}
        judged: dict[_Cell, dict[str, CallCount | None]] = {}
        for row in s.execute(judges):
            judged.setdefault(tuple(row[:4]), {})[row[4]] = _count(*row[5:])
        found = []
        for run_id, application, scenario, level, *counts in s.execute(applications):
            key = (run_id, application, scenario, level)
            dialogues, calls, prompt, completion = (int(v) for v in counts)
            found.append(
                CellUsage(
                    run_id,
                    application,
                    scenario,
                    level,
                    dialogues,
                    calls,
                    prompt,
                    completion,
                    simulator=simulated[key],
                    judges=dict(sorted(judged.get(key, {}).items())),
                )
            )
        return found


def _sums(*columns: Any) -> list[Any]:
    return [func.coalesce(func.sum(column), 0) for column in columns]


def _count(unrecorded: int, calls: int, prompt: int, completion: int) -> CallCount | None:
    return None if unrecorded else CallCount(int(calls), int(prompt), int(completion))
