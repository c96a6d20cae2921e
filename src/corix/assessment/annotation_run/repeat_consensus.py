"""The consensus of an item's repeated runs: the violation to gate on, and rows to store."""

from __future__ import annotations

from corix.assessment.answers import Answer, AnswerKey, AnswerValue, is_violation
from corix.assessment.risk_orders import RiskOrders
from corix.assessment.schema import AnnotationSchema
from corix.assessment.settling_rules import DEFAULT_RULE, SETTLING_RULES, RiskOrder, Value
from corix.assessment.stability import consensus
from corix.storage import StoredConsensus, StoredPass

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


def settled_violation(schema: AnnotationSchema, runs: Runs) -> bool:
    """Whether the screening runs of one item find a violation: each run is judged by the
    schema's violation rule and the verdicts settle by the default rule (ties toward a
    violation, as the measurement core settles them)."""
    if not runs:
        return False
    verdicts: list[Value] = [1.0 if is_violation(schema, run) else 0.0 for run in runs]
    return SETTLING_RULES.get(DEFAULT_RULE).settle(verdicts, RiskOrder(ordinal=True)).value == 1.0


def consensus_rows(
    session_id: str,
    category: str,
    annotator: str,
    runs: Runs,
    orders: RiskOrders,
) -> list[StoredConsensus]:
    """Consensus rows for one item: per question and turn, over the runs that answered it.

    The runs settle by the default rule, ties toward risk (``orders``), as the measurement
    core settles them by default; ``method`` names the rule, with ``_tie`` appended when
    the runs tied.
    """
    rows: list[StoredConsensus] = []
    for (question_id, turn), found in sorted(
        values_by_key(runs).items(), key=lambda item: (item[0][0], item[0][1] or 0)
    ):
        result = consensus(found, rule=DEFAULT_RULE, order=orders.of(category, question_id))
        method = DEFAULT_RULE
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
