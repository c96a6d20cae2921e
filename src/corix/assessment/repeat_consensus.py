"""The consensus of an item's repeated runs: answers to gate on, and rows to store."""

from __future__ import annotations

from collections.abc import Callable

from corix.assessment.answers import Answer, AnswerKey, AnswerValue
from corix.assessment.stability import consensus
from corix.storage.records import StoredConsensus, StoredPass

Runs = list[tuple[Answer, ...]]
"""The answers of each successful run of one item."""


def answers_of(stored: StoredPass) -> tuple[Answer, ...]:
    """The answers of a stored pass, as the annotator returned them."""
    return tuple(
        Answer(
            question_id=a.question_id,
            turn_index=a.turn_index,
            value=a.value,
            reasoning=a.reasoning,
        )
        for a in stored.answers
    )


def values_by_key(runs: Runs) -> dict[AnswerKey, list[AnswerValue]]:
    """Each question and turn's values over the runs that answered it."""
    values: dict[AnswerKey, list[AnswerValue]] = {}
    for run in runs:
        for answer in run:
            if answer.value is not None:
                values.setdefault(answer.key, []).append(answer.value)
    return values


def consensus_answers(runs: Runs, ordinal: Callable[[str], bool]) -> list[Answer]:
    """One answer per question and turn: the consensus of the runs that answered it."""
    if len(runs) == 1:
        return list(runs[0])  # a single run is its own consensus
    values = values_by_key(runs)
    return [
        Answer(
            question_id=question_id,
            turn_index=turn,
            value=consensus(found, ordinal=ordinal(question_id)).value,
        )
        for (question_id, turn), found in values.items()
    ]


def consensus_rows(
    session_id: str,
    category: str,
    annotator: str,
    runs: Runs,
    ordinal: Callable[[str], bool],
) -> list[StoredConsensus]:
    """Consensus rows for one item: per question and turn, over the runs that answered it.

    ``method`` is ``majority`` (nominal) or ``lower_median`` (ordinal), with ``_tie``
    appended when the runs tied and the tie was broken deterministically.
    """
    rows: list[StoredConsensus] = []
    for (question_id, turn), found in sorted(
        values_by_key(runs).items(), key=lambda item: (item[0][0], item[0][1] or 0)
    ):
        is_ordinal = ordinal(question_id)
        result = consensus(found, ordinal=is_ordinal)
        method = "lower_median" if is_ordinal else "majority"
        rows.append(
            StoredConsensus(
                session_id=session_id,
                category=category,
                annotator=annotator,
                question_id=question_id,
                turn_index=turn,
                value=result.value,
                method=f"{method}_tie" if result.tie else method,
                n_runs=result.n_runs,
                flip_rate=result.flip_rate,
            )
        )
    return rows
