"""Importing human labels: all checked first, errors by file and line, nothing half-stored."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from annotator_support import CLEAN, SPOILER, store_run

from corix.assessment.importing import LabelImportError, import_labels
from corix.errors import ConfigError
from corix.storage import Database
from corix.storage.annotations import load_passes

HEADER = "session_id,category,question_id,turn_index,annotator,value,reasoning"


@pytest.fixture
def run_id(sqlite_db: Database) -> str:
    return store_run(sqlite_db, [CLEAN, SPOILER])


def test_import_is_stored_whole_on_both_backends(any_db: Database, tmp_path: Path) -> None:
    run_id = store_run(any_db, [CLEAN])
    path = _csv(
        tmp_path,
        f"{CLEAN.id},dialogue_utility,du_usefulness,,cy,6,",
        f"{CLEAN.id},dialogue_utility,du_added_work,,cy,no,",
        f"{CLEAN.id},harm:ip_leakage,severity,,cy,0,",
    )
    assert import_labels(any_db, run_id, path).passes == 2
    stored = {p.category: [a.value for a in p.answers] for p in load_passes(any_db, run_id=run_id)}
    assert stored == {"dialogue_utility": [6.0, "no"], "harm:ip_leakage": [0.0]}


def _csv(tmp_path: Path, *rows: str) -> Path:
    path = tmp_path / "labels.csv"
    path.write_text("\n".join([HEADER, *rows]) + "\n", encoding="utf-8")
    return path


def test_a_clean_file_becomes_human_passes(
    sqlite_db: Database, run_id: str, tmp_path: Path
) -> None:
    path = _csv(
        tmp_path,
        f"{CLEAN.id},risk_assessment,ra_prohibited_released,,bo,no,nothing later than ep 3",
        f"{CLEAN.id},risk_assessment,ra_permitted_withheld,,bo,no,",
        f"{CLEAN.id},interaction_style,is_confident_tone,0,bo,7,",
        f"{CLEAN.id},interaction_style,is_over_familiar,0,bo,no,",
        f"{CLEAN.id},interaction_style,is_tone_clash,0,bo,no,",
        f"{SPOILER.id},harm:groundedness,severity,,bo,2,invents detail",
    )
    summary = import_labels(sqlite_db, run_id, path)
    assert (summary.passes, summary.answers, summary.annotators) == (3, 6, ["bo"])
    passes = {p.category: p for p in load_passes(sqlite_db, run_id=run_id)}
    assert all(p.annotator_kind == "human" and p.annotator == "bo" for p in passes.values())
    risk = passes["risk_assessment"].answers
    assert [(a.question_id, a.value, a.reasoning) for a in risk] == [
        ("ra_prohibited_released", "no", "nothing later than ep 3"),
        ("ra_permitted_withheld", "no", None),
    ]
    assert passes["interaction_style"].answers[0].value == 7.0
    assert passes["harm:groundedness"].answers[0].value == 2.0
    assert passes["risk_assessment"].provenance == {
        "source": "import",
        "file": "labels.csv",
        "line": 2,
    }


def test_every_problem_is_reported_by_line_and_nothing_is_stored(
    sqlite_db: Database, run_id: str, tmp_path: Path
) -> None:
    path = _csv(
        tmp_path,
        f"{CLEAN.id},risk_assessment,ra_prohibited_released,,bo,no,",  # line 2: fine alone
        f"{CLEAN.id},risk_assessment,ra_permitted_withheld,,bo,maybe,",  # line 3: not yes/no
        f"{CLEAN.id},risk_assessment,ra_outcome,,bo,negative,",  # line 4: hidden follow-up
        "no-such-session,risk_assessment,ra_prohibited_released,,bo,no,",  # line 5
        f"{SPOILER.id},harm:groundedness,severity,,bo,9,",  # line 6: off the 1–5 scale
        f"{SPOILER.id},interaction_style,is_confident_tone,x,bo,5,",  # line 7: bad turn
        f"{SPOILER.id},risk_assesment,ra_outcome,,bo,negative,",  # line 8: misspelt category
    )
    with pytest.raises(LabelImportError) as caught:
        import_labels(sqlite_db, run_id, path)
    lines = dict(caught.value.problems)
    assert "expected yes or no" in lines[3]
    assert "hidden by earlier answers" in lines[4]
    assert "not a complete session of run" in lines[5]
    assert "9 is not a whole number on the 'groundedness' scale 1–5" in lines[6]
    assert "turn_index: expected a whole number" in lines[7]
    assert "Did you mean 'risk_assessment'" in lines[8]
    assert f"{path}:3:" in str(caught.value)
    assert load_passes(sqlite_db, run_id=run_id) == []


def test_a_missing_required_answer_points_at_its_pass(
    sqlite_db: Database, run_id: str, tmp_path: Path
) -> None:
    path = _csv(tmp_path, f"{CLEAN.id},risk_assessment,ra_prohibited_released,,bo,no,")
    with pytest.raises(LabelImportError) as caught:
        import_labels(sqlite_db, run_id, path)
    assert caught.value.problems == [
        (2, "risk_assessment, ra_permitted_withheld: required, missing")
    ]


def test_importing_twice_is_refused(sqlite_db: Database, run_id: str, tmp_path: Path) -> None:
    lines = [
        {
            "session_id": SPOILER.id,
            "category": "harm:ip_leakage",
            "question_id": "severity",
            "annotator": "bo",
            "value": 0,
        },
    ]
    path = tmp_path / "labels.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines), encoding="utf-8")
    assert import_labels(sqlite_db, run_id, path).passes == 1
    with pytest.raises(LabelImportError, match="already has pass 0 of 'harm:ip_leakage'"):
        import_labels(sqlite_db, run_id, path)
    assert len(load_passes(sqlite_db, run_id=run_id)) == 1


def test_unreadable_files_name_the_file(sqlite_db: Database, run_id: str, tmp_path: Path) -> None:
    no_columns = tmp_path / "labels.csv"
    no_columns.write_text("item,value\nx,1\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"labels\.csv:1.*missing column\(s\) session_id"):
        import_labels(sqlite_db, run_id, no_columns)
    broken = tmp_path / "labels.jsonl"
    broken.write_text('{"session_id": "x"}\n{oops\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"labels\.jsonl:2.*not valid JSON"):
        import_labels(sqlite_db, run_id, broken)


def test_a_reasoning_cell_keeps_its_line_breaks_and_later_lines_keep_their_number(
    sqlite_db: Database, run_id: str, tmp_path: Path
) -> None:
    path = tmp_path / "labels.csv"
    path.write_bytes(
        (
            f"\ufeff{HEADER}\r\n"
            f"{CLEAN.id},risk_assessment,ra_prohibited_released,,bo,no,"
            '"ep 3 only,\r\nnot later"\r\n'
            f"{CLEAN.id},risk_assessment,ra_permitted_withheld,,bo,maybe,\r\n"
        ).encode()
    )
    with pytest.raises(LabelImportError) as caught:
        import_labels(sqlite_db, run_id, path)
    assert [line for line, _ in caught.value.problems] == [4]  # the quoted cell spans 2-3
    path.write_bytes(path.read_bytes().replace(b",maybe,", b",no,"))
    import_labels(sqlite_db, run_id, path)
    (stored,) = load_passes(sqlite_db, run_id=run_id)
    assert stored.answers[0].reasoning == "ep 3 only,\r\nnot later"
