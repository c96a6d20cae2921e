"""Measurement specifications: read from YAML with errors that name file, field and line."""

from __future__ import annotations

from pathlib import Path

import pytest

from corix.assessment.settling_rules import SETTLING_RULES, RiskOrder
from corix.errors import ConfigError
from corix.measurement.spec import MeasurementSpec, load_spec


def test_a_spec_file_loads_and_its_digest_ignores_the_file_name(tmp_path: Path) -> None:
    path = tmp_path / "spec.yaml"
    path.write_text("settling: majority\nannotators:\n  - kind: llm\n", encoding="utf-8")
    spec = load_spec(path)
    assert spec.settling == "majority" and spec.annotators[0].kind == "llm"
    assert spec.selects("llm:judge", "llm", None) and not spec.selects("alice", "human", None)


def test_an_unknown_settling_rule_names_the_file_field_and_line(tmp_path: Path) -> None:
    path = tmp_path / "spec.yaml"
    path.write_text("seed: 3\nsettling: majorty\n", encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_spec(path)
    message = str(caught.value)
    assert f"{path}:2" in message and "settling" in message and "majority" in message


def test_an_unknown_field_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "spec.yaml"
    path.write_text("settle: majority\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="settle"):
        load_spec(path)


@pytest.mark.parametrize(
    ("rule", "values", "ordinal", "expected", "tie"),
    [
        # Hand-derived: two against two, and an even number of ordinal values.
        ("majority", ["no", "yes"], False, ("no",), True),
        ("conservative", ["no", "yes"], False, ("yes",), True),
        ("median", [1.0, 3.0], True, (1.0,), True),
        ("conservative", [1.0, 3.0], True, (3.0,), True),
        ("conservative", [1.0, 3.0, 3.0], True, (3.0,), False),
        ("majority", [2.0, 2.0, 5.0], True, (2.0,), False),
        ("keep-disagreement", [1.0, 0.0, 1.0], True, (0.0, 1.0, 1.0), True),
    ],
)
def test_settling_rules_by_hand(
    rule: str, values: list[str | float], ordinal: bool, expected: tuple[object, ...], tie: bool
) -> None:
    # For words, "yes" is the risky answer (as the schema's violation rule names it).
    order = RiskOrder(ordinal=ordinal, risk=lambda v: (int(v == "yes"), 0.0, str(v)))
    settled = SETTLING_RULES.get(rule).settle(values, order if not ordinal else RiskOrder(True))
    assert settled.values == expected and settled.tie is tie and settled.n_values == len(values)


def test_the_default_rule_is_conservative() -> None:
    assert MeasurementSpec().settling == "conservative"
