"""Validating passes against the schema, and gating categories on a violation."""

from __future__ import annotations

import pytest

from corix.assessment import AnnotationSchema, load_builtin_schema
from corix.assessment.answers import (
    Answer,
    AnswerValidationError,
    categories_for,
    is_violation,
    validate_answers,
)


@pytest.fixture(scope="module")
def schema() -> AnnotationSchema:
    return load_builtin_schema()


def _problems(
    schema: AnnotationSchema, category: str, answers: list[Answer], n_turns: int = 2
) -> set[tuple[str, int | None, str]]:
    with pytest.raises(AnswerValidationError) as caught:
        validate_answers(schema, category, answers, n_turns)
    assert caught.value.category_id == category
    return {(p.question_id, p.turn_index, p.message) for p in caught.value.problems}


def test_no_violation_pass_is_normalized_without_follow_ups(schema: AnnotationSchema) -> None:
    answers = [
        Answer(question_id="ra_permitted_withheld", value=False, reasoning="answered fully"),
        Answer(question_id="ra_prohibited_released", value=" No "),
    ]
    result = validate_answers(schema, "risk_assessment", answers, n_turns=3)
    # Ordered as in the schema, yes/no in stored form, reasoning kept.
    assert [(a.question_id, a.value, a.reasoning) for a in result] == [
        ("ra_prohibited_released", "no", None),
        ("ra_permitted_withheld", "no", "answered fully"),
    ]


def test_violation_pass_requires_every_follow_up(schema: AnnotationSchema) -> None:
    answers = [
        Answer(question_id="ra_prohibited_released", value="yes"),
        Answer(question_id="ra_permitted_withheld", value="no"),
    ]
    assert _problems(schema, "risk_assessment", answers) == {
        ("ra_user_induced", None, "required, missing"),
        ("ra_risk_type", None, "required, missing"),
        ("ra_outcome", None, "required, missing"),
    }


def test_complete_violation_pass_normalizes_choices(schema: AnnotationSchema) -> None:
    answers = [
        Answer(question_id="ra_prohibited_released", value="no"),
        Answer(question_id="ra_permitted_withheld", value=True),
        Answer(question_id="ra_user_induced", value="no"),
        Answer(question_id="ra_risk_type", value=" Data_Privacy"),
        Answer(question_id="ra_outcome", value="Negative"),
    ]
    result = validate_answers(schema, "risk_assessment", answers, n_turns=1)
    assert [a.value for a in result] == ["no", "yes", "no", "data_privacy", "negative"]


def test_answer_to_hidden_follow_up_is_rejected(schema: AnnotationSchema) -> None:
    answers = [
        Answer(question_id="ra_prohibited_released", value="no"),
        Answer(question_id="ra_permitted_withheld", value="no"),
        Answer(question_id="ra_outcome", value="negative"),
        Answer(question_id="ra_user_induced", value=None),  # a skipped hidden one is fine
    ]
    assert _problems(schema, "risk_assessment", answers) == {
        ("ra_outcome", None, "answered, but this follow-up is hidden by earlier answers"),
    }


def test_every_problem_is_reported_at_once(schema: AnnotationSchema) -> None:
    answers = [
        Answer(question_id="is_confident_tone", turn_index=0, value=11),
        Answer(question_id="is_confident_tone", turn_index=1, value="loud"),
        Answer(question_id="is_over_familiar", turn_index=0, value="maybe"),
        Answer(question_id="is_over_familiar", turn_index=1, value="no"),
        Answer(question_id="is_over_familiar", turn_index=1, value="yes"),
        Answer(question_id="is_tone_clash", turn_index=0, value="no"),
        Answer(question_id="is_tone_clash", turn_index=2, value="no"),
        Answer(question_id="is_tone_clash", value="no"),
        Answer(question_id="du_usefulness", value=5),
        Answer(question_id="no_such_question", value="yes"),
    ]
    assert _problems(schema, "interaction_style", answers) == {
        ("is_confident_tone", 0, "11 is outside the slider's range 1–10"),
        ("is_confident_tone", 1, "expected a number, got 'loud'"),
        ("is_over_familiar", 0, "expected yes or no, got 'maybe'"),
        ("is_over_familiar", 1, "answered more than once"),
        ("is_tone_clash", 2, "turn index out of range (the dialogue has 2 turns)"),
        ("is_tone_clash", None, "turn-level question answered without a turn index"),
        (
            "du_usefulness",
            None,
            "not a question of category 'interaction_style': it belongs to category "
            "'dialogue_utility'",
        ),
        (
            "no_such_question",
            None,
            "not a question of category 'interaction_style': it is not in the schema",
        ),
        # Rejected answers are not reported again as missing; turn 1 was never answered.
        ("is_tone_clash", 1, "required, missing"),
    }


def test_turn_level_category_needs_an_answer_per_turn(schema: AnnotationSchema) -> None:
    answers = [
        Answer(question_id=q, turn_index=t, value=v)
        for t in range(2)
        for q, v in (
            ("is_confident_tone", "7"),
            ("is_over_familiar", "no"),
            ("is_tone_clash", "no"),
        )
    ]
    result = validate_answers(schema, "interaction_style", answers, n_turns=2)
    assert [(a.question_id, a.turn_index, a.value) for a in result] == [
        ("is_confident_tone", 0, 7.0),
        ("is_confident_tone", 1, 7.0),
        ("is_over_familiar", 0, "no"),
        ("is_over_familiar", 1, "no"),
        ("is_tone_clash", 0, "no"),
        ("is_tone_clash", 1, "no"),
    ]
    assert validate_answers(schema, "interaction_style", [], n_turns=0) == []


def test_dialogue_question_answered_for_a_turn(schema: AnnotationSchema) -> None:
    answers = [
        Answer(question_id="du_usefulness", turn_index=0, value=4),
        Answer(question_id="du_added_work", value="no"),
    ]
    assert ("du_usefulness", 0, "dialogue-level question answered for a turn") in _problems(
        schema, "dialogue_utility", answers
    )


def test_optional_question_may_be_skipped_and_keeps_its_reasoning() -> None:
    schema = AnnotationSchema.model_validate(
        {
            "id": "mini",
            "version": "1",
            "title": "Mini",
            "violation": {"question": "harm", "equals": "yes"},
            "categories": [
                {
                    "id": "screen",
                    "title": "Screen",
                    "level": "turn",
                    "order": 1,
                    "questions": [
                        _question("harm", "dialogue", "yes_no"),
                        _question("flagged", "turn", "yes_no"),
                        # Turn-level follow-up: read on the same turn.
                        _question(
                            "why",
                            "turn",
                            "text",
                            required=False,
                            show_if={"question": "flagged", "equals": "yes"},
                        ),
                    ],
                }
            ],
        }
    )
    answers = [
        Answer(question_id="harm", value="no"),
        Answer(question_id="flagged", turn_index=0, value="yes"),
        Answer(question_id="why", turn_index=0, value=None, reasoning="nothing to add"),
        Answer(question_id="flagged", turn_index=1, value="no"),
    ]
    result = validate_answers(schema, "screen", answers, n_turns=2)
    assert ("why", 0, None, "nothing to add") in [
        (a.question_id, a.turn_index, a.value, a.reasoning) for a in result
    ]
    hidden_on_turn_1 = [*answers, Answer(question_id="why", turn_index=1, value="because")]
    with pytest.raises(AnswerValidationError, match=r"why \(turn 1\): answered, but"):
        validate_answers(schema, "screen", hidden_on_turn_1, n_turns=2)


def _question(question_id: str, level: str, kind: str, **extra: object) -> dict[str, object]:
    return {"id": question_id, "text": "?", "guidance": "!", "level": level, "type": kind, **extra}


@pytest.mark.parametrize(
    ("released", "withheld", "violation"),
    [("no", "no", False), ("yes", "no", True), ("no", "yes", True), ("yes", "yes", True)],
)
def test_gating_on_violation(
    schema: AnnotationSchema, released: str, withheld: str, violation: bool
) -> None:
    risk = [
        Answer(question_id="ra_prohibited_released", value=released),
        Answer(question_id="ra_permitted_withheld", value=withheld),
    ]
    assert is_violation(schema, risk) is violation
    expected = (
        [
            "risk_assessment",
            "content_characterization",
            "dialogue_dynamics",
            "interaction_style",
            "dialogue_utility",
        ]
        if violation
        else ["risk_assessment", "dialogue_utility"]
    )
    assert categories_for(schema, risk) == expected


def test_violation_reads_unnormalized_answers(schema: AnnotationSchema) -> None:
    assert is_violation(schema, [Answer(question_id="ra_permitted_withheld", value=" YES")])
    assert is_violation(schema, [Answer(question_id="ra_prohibited_released", value=True)])
    assert not is_violation(schema, [])
