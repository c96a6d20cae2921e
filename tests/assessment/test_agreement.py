"""Agreement statistics against hand-derived values."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from corix.assessment.agreement import (
    AgreementReport,
    LabelRow,
    compare,
    compare_labels,
    compare_per_question,
    krippendorff_alpha,
    read_labels,
)
from corix.errors import ConfigError, CorixError, UnknownNameError


def _rows(
    annotator: str, values: list[str | float | None], question: str | None = None
) -> list[LabelRow]:
    return [
        LabelRow(item_id=f"i{i}", annotator=annotator, value=v, question_id=question)
        for i, v in enumerate(values, start=1)
        if v is not None
    ]


def test_nominal_two_annotators_by_hand() -> None:
    rows = _rows("A", ["a", "a", "b", "b"]) + _rows("B", ["a", "b", "b", "b"])
    report = compare(rows, "A", "B")
    assert report.n_items == 4
    assert report.exact_agreement == 0.75
    assert report.relaxed_agreement is None  # nominal
    assert report.labels == ["a", "b"]
    # rows: A's label, columns: B's label
    assert report.confusion == [[1, 1], [0, 2]]
    # κ: p_o = 3/4; p_e = P_A(a)P_B(a) + P_A(b)P_B(b) = 2/4·1/4 + 2/4·3/4 = 1/2;
    #    κ = (3/4 − 1/2) / (1 − 1/2) = 0.5
    assert report.cohen_kappa == pytest.approx(0.5)
    assert report.cohen_kappa_quadratic is None
    # α: coincidences o_aa = 2 (i1), o_ab = o_ba = 1 (i2), o_bb = 4 (i3, i4);
    #    n_a = 3, n_b = 5, n = 8; α = 1 − (n − 1)·(o_ab + o_ba) / (2·n_a·n_b)
    #    = 1 − 7·2 / 30 = 16/30
    assert report.alpha_nominal == pytest.approx(16 / 30)
    assert report.alpha_ordinal is None


def test_ordinal_two_annotators_by_hand() -> None:
    rows = _rows("A", [1, 2, 3, 3]) + _rows("B", [1, 3, 3, 2])
    report = compare(rows, "A", "B", ordinal=True)
    assert report.exact_agreement == 0.5
    assert report.relaxed_agreement == 1.0  # every pair within ±1
    assert report.labels == [1, 2, 3]
    assert report.confusion == [[1, 0, 0], [0, 0, 1], [0, 1, 1]]
    # κ: p_o = 1/2; marginals on both sides 1:1/4, 2:1/4, 3:1/2;
    #    p_e = 1/16 + 1/16 + 1/4 = 3/8; κ = (1/2 − 3/8) / (5/8) = 0.2
    assert report.cohen_kappa == pytest.approx(0.2)
    # Quadratic κ with w = (i − j)²: observed mean weight = (0 + 1 + 0 + 1) / 4 = 1/2;
    #    expected = Σ p_A(i) p_B(j) (i − j)² = 2·(1/16·1 + 1/8·4 + 1/8·1) = 11/8;
    #    κ_w = 1 − (1/2) / (11/8) = 7/11
    assert report.cohen_kappa_quadratic == pytest.approx(7 / 11)
    # α coincidences: o_11 = 2, o_23 = o_32 = 2, o_33 = 2; n_1 = 2, n_2 = 2, n_3 = 4, n = 8.
    # nominal: α = 1 − 7·(o_23 + o_32) / Σ_{c≠k} n_c n_k = 1 − 7·4 / 40 = 0.3
    assert report.alpha_nominal == pytest.approx(0.3)
    # ordinal δ²(c, k) = (Σ_{g=c..k} n_g − (n_c + n_k)/2)²: δ²(1,2) = 4, δ²(2,3) = 9,
    #    δ²(1,3) = 25; observed Σ o δ² = 4·9 = 36; expected Σ n_c n_k δ² over c ≠ k
    #    = 2·(4·4 + 8·25 + 8·9) = 576; α = 1 − 7·36 / 576 = 0.5625
    assert report.alpha_ordinal == pytest.approx(0.5625)


def test_quadratic_kappa_uses_distances_between_values_not_positions() -> None:
    # Values 1, 2, 5 on both sides, pairs (1,2), (2,1), (5,5); marginals 1/3 each.
    # Observed mean (x − y)² = 2/3; expected = (1/9)·2·(1 + 16 + 9) = 52/9;
    # κ_w = 1 − (2/3) / (52/9) = 23/26. (Positions 0, 1, 2 would give 0.5.)
    rows = _rows("A", [1, 2, 5]) + _rows("B", [2, 1, 5])
    assert compare(rows, "A", "B", ordinal=True).cohen_kappa_quadratic == pytest.approx(23 / 26)


def test_groups_compare_their_consensus() -> None:
    rows = (
        _rows("h1", ["yes", "no", "yes", "yes"])
        + _rows("h2", ["yes", "no", "no", "yes"])
        + _rows("h3", ["no", "no", None, "yes"])
        + _rows("llm", ["yes", "yes", "no", "yes", "no"])
    )
    report = compare(rows, "humans", "llm", groups={"humans": ["h3", "h1", "h2"]})
    assert report.members_a == ["h1", "h2", "h3"]
    assert report.members_b == ["llm"]
    # humans' consensus: i1 yes (2–1), i2 no, i3 tie yes/no → "no", i4 yes; i5 only llm.
    assert (report.n_items, report.n_only_a, report.n_only_b, report.n_group_ties) == (4, 0, 1, 1)
    assert report.exact_agreement == 0.75
    assert report.confusion == [[1, 1], [0, 2]]
    # κ: humans yes,no,no,yes; llm yes,yes,no,yes → p_o = 3/4,
    #    p_e = 1/2·1/4 + 1/2·3/4 = 1/2, κ = 0.5
    assert report.cohen_kappa == pytest.approx(0.5)


def test_krippendorff_alpha_three_annotators_with_missing_values() -> None:
    rows = (
        _rows("A", ["a", "a", "b", "a"])
        + _rows("B", ["a", "b", "b", None])
        + _rows("C", ["a", None, None, None])
    )
    # i1: a,a,a → o_aa += 3·2/(3−1) = 3; i2: a,b → o_ab = o_ba = 1; i3: b,b → o_bb = 2;
    # i4 has one label and is not pairable. n_a = 4, n_b = 3, n = 7.
    # α = 1 − (n − 1)·(o_ab + o_ba) / (2·n_a·n_b) = 1 − 6·2 / 24 = 0.5
    assert krippendorff_alpha(rows) == pytest.approx(0.5)
    # Only A and B: i1 a,a → o_aa = 2; i2 o_ab = o_ba = 1; i3 o_bb = 2; n_a = 3, n_b = 3, n = 6;
    # α = 1 − 5·2 / 18 = 4/9
    assert krippendorff_alpha(rows, annotators=["A", "B"]) == pytest.approx(4 / 9)


def test_undefined_statistics_are_none() -> None:
    same = compare(_rows("A", ["x", "x"]) + _rows("B", ["x", "x"]), "A", "B")
    assert same.exact_agreement == 1.0
    assert (same.cohen_kappa, same.alpha_nominal) == (None, None)
    disjoint = compare(_rows("A", ["x", None]) + _rows("B", [None, "x"]), "A", "B", ordinal=False)
    assert (disjoint.n_items, disjoint.n_only_a, disjoint.n_only_b) == (0, 1, 1)
    assert disjoint.exact_agreement is None
    assert disjoint.confusion == []


def test_report_is_json_serializable() -> None:
    report = compare(_rows("A", [1, 2, 3]) + _rows("B", [1, 2, 2]), "A", "B", ordinal=True)
    assert AgreementReport.model_validate(json.loads(report.model_dump_json())) == report


def test_per_question_reports() -> None:
    rows = (
        _rows("A", ["yes", "no"], "q_flag")
        + _rows("B", ["yes", "yes"], "q_flag")
        + _rows("A", [3, 7], "q_score")
        + _rows("B", [4, 9], "q_score")
    )
    reports = compare_per_question(rows, "A", "B", ordinal_questions={"q_score"})
    assert [
        (r.question_id, r.ordinal, r.exact_agreement, r.relaxed_agreement) for r in reports
    ] == [
        ("q_flag", False, 0.5, None),
        ("q_score", True, 0.0, 0.5),
    ]
    with pytest.raises(CorixError, match="several questions"):
        compare(rows, "A", "B")


def test_compare_labels_picks_the_question_and_the_scale() -> None:
    # Unnamed questions: one report, numbers ordinal unless nominal.
    rows = _rows("A", [1, 2, 3, 3]) + _rows("B", [1, 3, 3, 2])
    (ordinal,) = compare_labels(rows, "A", "B")
    assert ordinal.relaxed_agreement == 1.0  # every pair within ±1
    assert ordinal.cohen_kappa == pytest.approx(0.2)  # as in the ordinal test above
    (nominal,) = compare_labels(rows, "A", "B", nominal=True)
    assert nominal.relaxed_agreement is None and nominal.alpha_ordinal is None
    # Named questions: a report each, or only the one asked for.
    named = _rows("A", [1, 2], "q1") + _rows("B", [1, 1], "q1")
    named += _rows("A", ["x", "y"], "q2") + _rows("B", ["x", "y"], "q2")
    q1, q2 = compare_labels(named, "A", "B")
    assert (q1.question_id, q1.exact_agreement, q1.relaxed_agreement) == ("q1", 0.5, 1.0)
    assert (q2.question_id, q2.exact_agreement, q2.relaxed_agreement) == ("q2", 1.0, None)
    (only,) = compare_labels(named, "A", "B", question="q2")
    assert only.question_id == "q2" and only.n_items == 2


def test_sides_must_exist_and_not_overlap() -> None:
    rows = _rows("annotator_1", ["a"]) + _rows("annotator_2", ["a"])
    with pytest.raises(UnknownNameError, match="Did you mean 'annotator_2'"):
        compare(rows, "annotator_1", "annotator_3")
    with pytest.raises(CorixError, match="share annotators"):
        compare(rows, "all", "annotator_1", groups={"all": ["annotator_1", "annotator_2"]})


def test_duplicate_labels_are_rejected() -> None:
    with pytest.raises(CorixError, match="more than once"):
        compare(_rows("A", ["a"]) + _rows("A", ["b"]) + _rows("B", ["a"]), "A", "B")


def test_read_csv_and_jsonl_agree(tmp_path: Path) -> None:
    csv_path = tmp_path / "labels.csv"
    csv_path.write_text(
        "item_id,annotator,value,notes\n1,human,3,easy\n2,human,,skipped\n2,human2,4,\n",
        encoding="utf-8",
    )
    jsonl_path = tmp_path / "labels.jsonl"
    jsonl_path.write_text(
        '{"item_id": 1, "annotator": "llm", "value": 3}\n\n'
        '{"item_id": "2", "annotator": "llm", "value": 4.0, "question_id": null}\n',
        encoding="utf-8",
    )
    human = read_labels(csv_path)
    llm = read_labels(jsonl_path)
    assert [(r.item_id, r.annotator, r.value) for r in human] == [
        ("1", "human", "3"),
        ("2", "human2", "4"),
    ]
    assert [(r.item_id, r.value) for r in llm] == [("1", 3.0), ("2", 4.0)]
    # "3" from CSV and 3 from JSONL are the same nominal label.
    report = compare(human + llm, "humans", "llm", groups={"humans": ["human", "human2"]})
    assert report.exact_agreement == 1.0


def test_a_csv_item_id_with_a_line_break_is_one_cell(tmp_path: Path) -> None:
    path = tmp_path / "labels.csv"
    path.write_text('item_id,annotator,value\n"a\nb",x,1\nc,x,2\n', encoding="utf-8")
    assert [(row.item_id, row.value) for row in read_labels(path)] == [("a\nb", "1"), ("c", "2")]


def test_csv_errors_name_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.csv"
    path.write_text("item,annotator,value\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"missing column.*item_id") as caught:
        read_labels(path)
    assert caught.value.line == 1
    assert caught.value.path == str(path)
    path.write_text("item_id,annotator,value\na,x,1\nb,x,2\na,x,3\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="already labelled item 'a' on line 2") as caught:
        read_labels(path)
    assert caught.value.line == 4


def test_jsonl_errors_name_file_line_and_field(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(
        '{"item_id": "a", "annotator": "x", "value": 1}\n{"item_id": "b",\n', encoding="utf-8"
    )
    with pytest.raises(ConfigError, match="not valid JSON") as caught:
        read_labels(path)
    assert caught.value.line == 2
    path.write_text('{"item_id": "a", "value": 1}\n', encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        read_labels(path)
    assert (caught.value.line, caught.value.field) == (1, "annotator")
    path.write_text("[1, 2]\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="expected a JSON object"):
        read_labels(path)
