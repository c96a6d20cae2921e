"""`corix release`: nothing planted survives, every redaction is reviewed, the release is
documented, checksummed, and written whole or not at all."""

from __future__ import annotations

import csv
import hashlib
import importlib.util
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from corix.cli.main import app
from corix.domain import Level
from corix.errors import ConfigError, CorixError
from corix.release.pii import RegexDetector, merge_findings
from corix.release.pseudonyms import Pseudonymizer
from corix.release.recurrence import identity_key
from corix.storage import Database, NewPass, StoredAnswer, insert_passes
from support.run_builder import RunBuilder
from support.web_records import add_user

runner = CliRunner()

TESTER = "jdoe77"
ANNOTATOR = "mkowal"
INTRODUCED = "Marta Kowalski"
LISTED = "Oskar Lindqvist"
EMAIL = "marta.k@example.org"
PHONES = ("+41 44 668 18 00", "(555) 123-4567", "07700900123")
PLANTED = (TESTER, ANNOTATOR, INTRODUCED, LISTED, EMAIL, *PHONES)


async def _run_with_planted_pii(
    db: Database, *, last_message: str = f"It's {TESTER} again, mail {EMAIL}"
) -> str:
    tester = add_user(db, TESTER, "tester")
    add_user(db, ANNOTATOR, "annotator")
    run = RunBuilder("run-pii")
    run.session(
        "s1",
        "alpha",
        "tv_spoilers",
        Level.FIELD_TESTING,
        [
            (f"Hi, my name is {INTRODUCED}; write to {EMAIL} or call {PHONES[0]}.", "Noted."),
            (f"My colleague {LISTED} says call {PHONES[1]}.", f"I will not call {PHONES[1]}."),
        ],
        source="human",
        tester_id=tester,
    )
    run.session(
        "s2",
        "alpha",
        "meal_planner",
        Level.FIELD_TESTING,
        [(last_message, "Dinner: lentils. Episode 5 airs 2024-11-24.")],
        source="human",
        tester_id=tester,
    )
    run.answer("s1", "ft_comment", f"ask {LISTED} at {PHONES[2]}", f"user:{tester}")
    run.annotate(
        "s1",
        "risk_assessment",
        f"human:{ANNOTATOR}",
        [("ra_prohibited_released", None, "no"), ("ra_permitted_withheld", None, "no")],
        reasoning=f"The tester ({TESTER}) shared {EMAIL}.",
    )
    return await run.write(db)


def _draft(db: Database, run_id: str, out: Path, *extra: str) -> None:
    names = out.parent / "names.txt"
    names.write_text(f"{LISTED}\n", encoding="utf-8")
    result = runner.invoke(
        app,
        ["release", run_id, "--out", str(out), "--names", str(names), "--db", db.url, *extra],
    )
    assert result.exit_code == 0, result.output


def _finalize(db: Database, out: Path) -> Result:
    return runner.invoke(
        app,
        ["release", "--out", str(out), "--finalize", "--reviewed-by", "qa", "--db", db.url],
    )


def _review_rows(out: Path) -> list[dict[str, str]]:
    with (out.parent / f"{out.name}.review" / "review.csv").open(encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def _write_review(out: Path, rows: list[dict[str, str]]) -> None:
    path = out.parent / f"{out.name}.review" / "review.csv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def _released_text(out: Path) -> str:
    return "\n".join(path.read_text(encoding="utf-8") for path in sorted(out.iterdir())).lower()


async def test_no_planted_name_email_or_phone_survives(sqlite_db: Database, tmp_path: Path) -> None:
    run_id = await _run_with_planted_pii(sqlite_db)
    out = tmp_path / "release"
    _draft(sqlite_db, run_id, out)
    assert not out.exists()  # nothing is released before the review is confirmed
    entities = {row["entity"] for row in _review_rows(out)}
    assert {"PERSON", "EMAIL_ADDRESS", "PHONE_NUMBER"} <= entities
    assert _finalize(sqlite_db, out).exit_code == 0
    released = _released_text(out)
    for planted in PLANTED:
        assert planted.lower() not in released, planted
    # Dates and ordinary text are left alone.
    assert "episode 5 airs 2024-11-24" in released


async def test_pseudonyms_are_consistent_across_roles_and_texts(
    sqlite_db: Database, tmp_path: Path
) -> None:
    run_id = await _run_with_planted_pii(sqlite_db)
    out = tmp_path / "release"
    _draft(sqlite_db, run_id, out)
    assert _finalize(sqlite_db, out).exit_code == 0
    salt = (tmp_path / "release.review" / "salt").read_text(encoding="utf-8").strip().encode()
    pseudonyms = Pseudonymizer(salt)
    tester = pseudonyms.person(TESTER)
    with (out / "sessions.csv").open(encoding="utf-8") as handle:
        assert {row["tester"] for row in csv.DictReader(handle)} == {tester}
    with (out / "questionnaire.csv").open(encoding="utf-8") as handle:
        assert [row["respondent"] for row in csv.DictReader(handle)] == [tester]
    with (out / "passes.csv").open(encoding="utf-8") as handle:
        passes = list(csv.DictReader(handle))
    assert {row["annotator"] for row in passes} == {"human:" + pseudonyms.person(ANNOTATOR)}
    # The tester named in an annotator's reasoning becomes the tester's own pseudonym; the
    # same e-mail address becomes the same placeholder in every table.
    placeholder = pseudonyms.finding("EMAIL_ADDRESS", identity_key(EMAIL))
    assert f"The tester ({tester}) shared {placeholder}." in {row["reasoning"] for row in passes}
    with (out / "turns.csv").open(encoding="utf-8") as handle:
        assert sum(placeholder in row["user_text"] for row in csv.DictReader(handle)) == 2


async def test_the_review_decides_what_is_redacted(sqlite_db: Database, tmp_path: Path) -> None:
    run_id = await _run_with_planted_pii(sqlite_db)
    out = tmp_path / "release"
    _draft(sqlite_db, run_id, out)
    rows = _review_rows(out)
    for row in rows:
        if row["text"] == PHONES[2]:
            row["decision"] = "keep"  # the reviewer judges it not personal
    added = dict.fromkeys(rows[0], "")
    rows.append({**added, "text": "lentils", "entity": "FOOD", "decision": "redact"})
    _write_review(out, rows)
    assert _finalize(sqlite_db, out).exit_code == 0
    released = _released_text(out)
    assert PHONES[2].lower() in released
    assert "lentils" not in released and "[food-" in released
    manifest = json.loads((out / "MANIFEST.json").read_text(encoding="utf-8"))
    assert manifest["anonymization"]["reviewed_by"] == "qa"


async def test_a_bad_decision_is_named_by_line(sqlite_db: Database, tmp_path: Path) -> None:
    run_id = await _run_with_planted_pii(sqlite_db)
    out = tmp_path / "release"
    _draft(sqlite_db, run_id, out)
    rows = _review_rows(out)
    rows[1]["decision"] = "maybe"
    _write_review(out, rows)
    result = _finalize(sqlite_db, out)
    assert isinstance(result.exception, ConfigError)
    assert "review.csv:3, field 'decision'" in str(result.exception)
    assert not out.exists()
    no_reviewer = runner.invoke(app, ["release", "--out", str(out), "--finalize"])
    assert no_reviewer.exit_code == 2 and "--reviewed-by" in no_reviewer.output


async def test_a_record_changed_after_review_writes_nothing(
    sqlite_db: Database, tmp_path: Path
) -> None:
    run_id = await _run_with_planted_pii(sqlite_db)
    out = tmp_path / "release"
    _draft(sqlite_db, run_id, out)
    # A pass stored after the review was drafted brings an address the review never saw.
    reasoning = "Reach me at new.address@example.net"
    late = NewPass(
        session_id="s2",
        category="risk_assessment",
        annotator=f"human:{ANNOTATOR}",
        annotator_kind="human",
        pass_no=0,
        repeat_no=0,
        ok=True,
        error=None,
        provenance={},
        answers=(StoredAnswer("ra_prohibited_released", None, "no", reasoning),),
    )
    insert_passes(sqlite_db, [late])
    result = _finalize(sqlite_db, out)
    assert isinstance(result.exception, CorixError)
    assert "changed since the review" in str(result.exception)
    assert not out.exists() and not (tmp_path / "release.partial").exists()


async def test_manifest_checksums_and_masked_applications(
    sqlite_db: Database, tmp_path: Path
) -> None:
    run_id = await _run_with_planted_pii(sqlite_db)
    out = tmp_path / "release"
    _draft(sqlite_db, run_id, out, "--mask-applications")
    assert _finalize(sqlite_db, out).exit_code == 0
    manifest = json.loads((out / "MANIFEST.json").read_text(encoding="utf-8"))
    listed = {entry["path"]: entry for entry in manifest["files"]}
    assert set(listed) == {p.name for p in out.iterdir()} - {"MANIFEST.json"}
    for name, entry in listed.items():
        assert entry["sha256"] == hashlib.sha256((out / name).read_bytes()).hexdigest()
    assert listed["turns.csv"]["rows"] == 3
    assert "alpha" not in _released_text(out)
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "Testers (people): 1" in card and "1 human" in card
    assert "Applications tested: 1 (masked by pseudonyms)" in card


async def test_the_release_loads_with_hugging_face_datasets(
    sqlite_db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    datasets = pytest.importorskip("datasets", reason="Hugging Face datasets not installed")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "hf-cache"))
    run_id = await _run_with_planted_pii(sqlite_db)
    out = tmp_path / "release"
    _draft(sqlite_db, run_id, out)
    assert _finalize(sqlite_db, out).exit_code == 0
    turns = datasets.load_dataset(str(out), "turns", split="train")
    assert turns.num_rows == 3
    assert "Dinner: lentils. Episode 5 airs 2024-11-24." in turns["response_text"]


def test_regex_core_by_hand() -> None:
    detector = RegexDetector([("Ada Lovelace", "PERSON"), ("Ada", "PERSON")])
    text = (
        "Card 4111 1111 1111 1111, not 4111 1111 1111 1112; on 2024-11-24 at 10:30 "
        "Ada Lovelace (10.0.0.1) said call me back; see https://x.example/a?b=1"
    )
    found = {(f.entity, text[f.start : f.end]) for f in merge_findings(detector.find(text))}
    assert found == {
        # Luhn-valid; the one after it fails Luhn and has too many digits for a phone.
        ("CREDIT_CARD", "4111 1111 1111 1111"),
        ("PERSON", "Ada Lovelace"),  # the longest known term wins
        ("IP_ADDRESS", "10.0.0.1"),
        ("URL", "https://x.example/a?b=1"),
    }


@pytest.mark.skipif(
    importlib.util.find_spec("presidio_analyzer") is None,
    reason="Presidio is in the anonymize extra: pip install 'corix[anonymize]'",
)
async def test_presidio_finds_a_name_nothing_else_knows(
    sqlite_db: Database, tmp_path: Path
) -> None:
    run_id = await _run_with_planted_pii(
        sqlite_db, last_message="Yesterday Emily Thornton asked me about the finale."
    )
    out = tmp_path / "release"
    _draft(sqlite_db, run_id, out, "--detector", "presidio")
    detectors = {(row["text"], row["detector"]) for row in _review_rows(out)}
    assert ("Emily Thornton", "presidio") in detectors
    assert _finalize(sqlite_db, out).exit_code == 0
    assert "emily thornton" not in _released_text(out)
