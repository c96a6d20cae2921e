"""The annotation schema: the built-in ARIA schema and validation of user schemas."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from corix.assessment import AnnotationSchema, QuestionLevel, QuestionType, load_builtin_schema
from corix.assessment.schema import load_schema
from corix.errors import ConfigError, UnknownNameError

NIST_RISKS = [
    "cbrn_information",
    "confabulation",
    "dangerous_violent_hateful_content",
    "data_privacy",
    "environmental",
    "harmful_bias_homogenization",
    "human_ai_configuration",
    "information_integrity",
    "information_security",
    "intellectual_property",
    "obscene_degrading_abusive_content",
    "value_chain_component_integration",
]


@pytest.fixture(scope="module")
def schema() -> AnnotationSchema:
    return load_builtin_schema()


def test_builtin_schema_has_aria_categories_in_order(schema: AnnotationSchema) -> None:
    assert [(c.id, c.level) for c in schema.ordered_categories()] == [
        ("risk_assessment", QuestionLevel.DIALOGUE),
        ("content_characterization", QuestionLevel.TURN),
        ("dialogue_dynamics", QuestionLevel.DIALOGUE),
        ("interaction_style", QuestionLevel.TURN),
        ("dialogue_utility", QuestionLevel.DIALOGUE),
    ]
    gated = {c.id for c in schema.categories if c.gate.requires_violation}
    assert gated == {"content_characterization", "dialogue_dynamics", "interaction_style"}
    assert schema.screening_category.id == "risk_assessment"


def test_builtin_schema_question_ids_and_types(schema: AnnotationSchema) -> None:
    expected = {
        "risk_assessment": {
            "ra_prohibited_released": QuestionType.YES_NO,
            "ra_permitted_withheld": QuestionType.YES_NO,
            "ra_user_induced": QuestionType.YES_NO,
            "ra_risk_type": QuestionType.CHOICE,
            "ra_outcome": QuestionType.CHOICE,
        },
        "content_characterization": dict.fromkeys(
            ["cc_relevant", "cc_new_valuable", "cc_consistent_with_packet", "cc_superfluous"],
            QuestionType.YES_NO,
        ),
        "dialogue_dynamics": {
            "dd_over_reliance": QuestionType.YES_NO,
            "dd_escalation": QuestionType.YES_NO,
            "dd_unnatural": QuestionType.YES_NO,
            "dd_user_action": QuestionType.CHOICE,
        },
        "interaction_style": {
            "is_confident_tone": QuestionType.SLIDER,
            "is_over_familiar": QuestionType.YES_NO,
            "is_tone_clash": QuestionType.YES_NO,
        },
        "dialogue_utility": {
            "du_usefulness": QuestionType.SLIDER,
            "du_added_work": QuestionType.YES_NO,
        },
    }
    actual = {c.id: {q.id: q.type for q in c.questions} for c in schema.categories}
    assert actual == expected
    for category in schema.categories:
        for question in category.questions:
            assert question.level is category.level
            assert question.text.strip()
            assert question.guidance.strip()


def test_builtin_choices_and_sliders(schema: AnnotationSchema) -> None:
    assert list(schema.question("ra_risk_type").allowed_values()) == NIST_RISKS
    assert schema.question("ra_outcome").allowed_values() == (
        "positive",
        "negative",
        "both",
        "neither",
    )
    assert schema.question("dd_user_action").allowed_values() == (
        "accepted",
        "questioned",
        "rejected",
        "not_acted",
        "unclear",
    )
    for slider in ("is_confident_tone", "du_usefulness"):
        assert schema.question(slider).slider_range == (1, 10)
        assert schema.question(slider).is_ordinal


def test_builtin_follow_ups_need_a_violation(schema: AnnotationSchema) -> None:
    violation = [("ra_prohibited_released", "yes"), ("ra_permitted_withheld", "yes")]
    assert [(c.question, c.equals) for c in schema.violation.any_of] == violation
    for follow_up in ("ra_user_induced", "ra_risk_type", "ra_outcome"):
        show_if = schema.question(follow_up).show_if
        assert show_if is not None
        assert [(c.question, c.equals) for c in show_if.any_of] == violation
    assert schema.question("ra_prohibited_released").show_if is None


def test_unknown_category_suggests_the_closest(schema: AnnotationSchema) -> None:
    with pytest.raises(UnknownNameError, match="Did you mean 'dialogue_utility'"):
        schema.category("dialog_utility")


def test_builtin_schema_round_trips_through_a_user_file(
    schema: AnnotationSchema, tmp_path: Path
) -> None:
    path = tmp_path / "schema.yaml"
    path.write_text(yaml.safe_dump(schema.model_dump(mode="json")), encoding="utf-8")
    assert load_schema(path) == schema


MINIMAL = """\
id: mini
version: "1"
title: Minimal
violation: {question: harm, equals: yes}
categories:
  - id: screen
    title: Screen
    level: dialogue
    order: 1
    questions:
      - id: harm
        text: Harmful?
        guidance: Say yes if harmful.
        level: dialogue
        type: yes_no
      - id: kind
        text: Which kind?
        guidance: Pick one.
        level: dialogue
        type: choice
        options: [insult, threat]
        show_if: {question: harm, equals: yes}
  - id: detail
    title: Detail
    level: turn
    order: 2
    gate: {requires_violation: true}
    questions:
      - id: tone
        text: Tone?
        guidance: Rate the tone.
        level: turn
        type: slider
        min: 0
        max: 4
"""


def _line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), start=1) if needle in line)


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "custom.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_user_schema_loads_with_unquoted_yes_and_bare_options(tmp_path: Path) -> None:
    schema = load_schema(_write(tmp_path, MINIMAL))
    assert schema.violation.any_of[0].equals == "yes"  # YAML's bare `yes` is a boolean
    kind = schema.question("kind")
    assert [(o.value, o.label) for o in kind.options] == [
        ("insult", "Insult"),
        ("threat", "Threat"),
    ]


def _error_for(tmp_path: Path, text: str) -> ConfigError:
    with pytest.raises(ConfigError) as caught:
        load_schema(_write(tmp_path, text))
    return caught.value


def test_follow_up_to_unknown_question_names_it_and_the_place(tmp_path: Path) -> None:
    error = _error_for(
        tmp_path, MINIMAL.replace("show_if: {question: harm", "show_if: {question: harms")
    )
    assert error.path is not None
    assert error.path.endswith("custom.yaml")
    assert error.field == "categories.0"
    assert error.line == _line_of(MINIMAL, "- id: screen")  # the follow-up's category
    assert "'kind'" in str(error)
    assert "'harms'" in str(error)


def test_follow_up_to_a_value_the_question_never_takes(tmp_path: Path) -> None:
    error = _error_for(
        tmp_path,
        MINIMAL.replace(
            "show_if: {question: harm, equals: yes}", "show_if: {question: harm, equals: maybe}"
        ),
    )
    assert "never" in str(error)
    assert "maybe" in str(error)


def test_duplicate_question_ids_are_rejected(tmp_path: Path) -> None:
    error = _error_for(tmp_path, MINIMAL.replace("- id: tone", "- id: kind"))
    assert "duplicate question id: kind" in str(error)


def test_slider_without_range_names_field_and_line(tmp_path: Path) -> None:
    error = _error_for(tmp_path, MINIMAL.replace("        max: 4\n", ""))
    assert error.field == "categories.1.questions.0"
    assert error.line == _line_of(MINIMAL, "- id: tone")
    assert "needs both 'min' and 'max'" in str(error)


def test_choice_needs_two_options(tmp_path: Path) -> None:
    error = _error_for(tmp_path, MINIMAL.replace("[insult, threat]", "[insult]"))
    assert "at least two options" in str(error)


def test_violation_must_refer_to_a_known_question(tmp_path: Path) -> None:
    error = _error_for(
        tmp_path, MINIMAL.replace("violation: {question: harm,", "violation: {question: hurt,")
    )
    assert "unknown question 'hurt'" in str(error)


def test_gated_category_must_follow_the_screening_one(tmp_path: Path) -> None:
    error = _error_for(tmp_path, MINIMAL.replace("order: 2", "order: 0"))
    assert "must come after 'screen'" in str(error)


def test_unknown_field_is_rejected_with_its_line(tmp_path: Path) -> None:
    text = MINIMAL.replace("        max: 4\n", "        max: 4\n        step: 1\n")
    error = _error_for(tmp_path, text)
    assert error.field == "categories.1.questions.0.step"
    assert error.line == _line_of(text, "step: 1")
