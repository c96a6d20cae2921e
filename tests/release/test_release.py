"""`corix release`: nothing planted survives, every redaction is reviewed, the release is
documented, checksummed, and written whole or not at all."""

from __future__ import annotations

import csv
import hashlib
import importlib.util
import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from corix.cli.main import app
from corix.domain import Level
from corix.errors import ConfigError, CorixError
from corix.release.pii import Finding, RegexDetector, merge_findings
from corix.release.presidio import _CHUNK, _chunks
from corix.release.pseudonyms import Pseudonymizer
from corix.release.recurrence import Identifiers, identity_key
from corix.release.review import read_review, write_review
from corix.release.scrub import Scrubber
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
    # The datasheet says what was looked for, and what was not.
    assert "- regex core looked for: people's names" in card
    assert "passport numbers (after the word passport)" in card
    assert "- Not looked for by any detector: places other than street addresses" in card


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


async def test_a_name_found_once_is_replaced_wherever_it_recurs(
    sqlite_db: Database, tmp_path: Path
) -> None:
    tester = add_user(sqlite_db, TESTER, "tester")
    run = RunBuilder("run-recurs")
    run.session(
        "s1",
        "alpha",
        "meal_planner",
        Level.FIELD_TESTING,
        [
            ("Hi, my name is Sarah Connor.", "Sure Sarah Connor! Your order is noted."),
            ("Thanks.", "SARAH, anything else?"),
        ],
        source="human",
        tester_id=tester,
    )
    run.session(
        "s2",
        "alpha",
        "meal_planner",
        Level.FIELD_TESTING,
        [("Is Sarah's parcel here? connor said so.", "Yes, Ms Connor's parcel arrived.")],
        source="human",
        tester_id=tester,
    )
    run.answer("s2", "ft_comment", "sarah  connor was pleased", f"user:{tester}")
    run_id = await run.write(sqlite_db)
    out = tmp_path / "release"
    _draft(sqlite_db, run_id, out)
    assert _finalize(sqlite_db, out).exit_code == 0
    released = _released_text(out)
    assert "sarah" not in released and "connor" not in released
    salt = (tmp_path / "release.review" / "salt").read_text(encoding="utf-8").strip().encode()
    # One pseudonym for every variant: the full name, its words alone, any case, possessives.
    sarah = Pseudonymizer(salt).finding("PERSON", identity_key("Sarah Connor")).lower()
    assert released.count(sarah) == 7
    assert f"is {sarah}'s parcel here? {sarah} said so." in released


def test_hostile_text_is_scrubbed_and_reviewed(tmp_path: Path) -> None:
    scrubber = Scrubber(Pseudonymizer(b"0123456789abcdef"), usernames=(), mask_applications=False)
    huge = "word " * 100_000 + "my name is Ada Byron"  # half a megabyte
    rows = [
        {"session_id": "s\0", "turn": 0, "user_text": "nul\0 ada@example.org\0", "error": None},
        {"session_id": "s", "turn": 1, "user_text": "lone \ud800 Ada Byron \udfff", "error": None},
        {"session_id": "s", "turn": 2, "user_text": huge, "response_text": "=1+1 Ada"},
    ]
    identifiers = Identifiers()
    for row in rows:
        scrubber.collect("turns", row, identifiers)
    scrubber.learn(identifiers)
    located = [list(scrubber.locate("turns", row)) for row in rows]
    found = [one for row in located for one in row]
    assert {one.text for one in found} == {"ada@example.org", "Ada Byron", "Ada"}
    released = [scrubber.released("turns", row, rl) for row, rl in zip(rows, located, strict=True)]
    assert released[1]["user_text"].startswith("lone \ud800 [PERSON-")
    assert "Ada" not in released[2]["response_text"]
    review = tmp_path / "review.csv"
    assert write_review(review, found) == len(found)
    assert len(read_review(review).decisions) == len(found)
    # The reply starting "=1+1" is a formula to a spreadsheet: its context cell is escaped.
    with review.open(encoding="utf-8") as handle:
        contexts = [row["context"] for row in csv.DictReader(handle)]
    assert "'=1+1 [Ada]" in contexts


async def test_an_identifier_is_kept_only_where_every_finding_of_it_is_kept(
    sqlite_db: Database, tmp_path: Path
) -> None:
    run_id = await _run_with_planted_pii(sqlite_db)
    out = tmp_path / "release"
    _draft(sqlite_db, run_id, out)
    rows = _review_rows(out)
    emails = [row for row in rows if row["text"] == EMAIL]
    assert len(emails) == 4  # two turns and an annotator's reasoning in two answers
    emails[0]["decision"] = "keep"
    _write_review(out, rows)
    assert _finalize(sqlite_db, out).exit_code == 0
    assert EMAIL not in _released_text(out)  # redacted where the other two findings say so
    for row in emails:
        row["decision"] = "keep"
    _write_review(out, rows)
    shutil.rmtree(out)
    assert _finalize(sqlite_db, out).exit_code == 0
    assert _released_text(out).count(EMAIL) == 4


async def test_review_cells_a_spreadsheet_would_run_are_escaped(
    sqlite_db: Database, tmp_path: Path
) -> None:
    run_id = await _run_with_planted_pii(
        sqlite_db, last_message='=HYPERLINK("https://evil.example") or +41 44 668 18 00'
    )
    out = tmp_path / "release"
    _draft(sqlite_db, run_id, out)
    rows = _review_rows(out)
    assert "'+41 44 668 18 00" in {row["text"] for row in rows}
    assert any(row["context"].startswith("'=HYPERLINK") for row in rows)
    for row in rows:
        for cell in row.values():
            assert not cell.startswith(("=", "+", "-", "@")), cell
    # Read back without the quote: an added term written escaped is the term itself.
    rows.append({**dict.fromkeys(rows[0], ""), "text": "'=lentils", "decision": "redact"})
    _write_review(out, rows)
    assert read_review(out.parent / "release.review" / "review.csv").added == [
        ("=lentils", "PERSON")
    ]


def test_presidio_reads_a_huge_text_in_pieces_cut_at_white_space() -> None:
    text = ("lorem ipsum " * 20_000) + "x" * 250_000
    pieces = list(_chunks(text))
    assert "".join(piece for _, piece in pieces) == text
    assert all(offset == text.index(piece, offset) for offset, piece in pieces)
    assert all(len(piece) <= _CHUNK for _, piece in pieces)
    assert pieces[0][1].endswith(" ") and len(pieces) == 6  # 3 of lorem, 3 of x


def test_recurrences_by_hand() -> None:
    identifiers = Identifiers()
    for text, entity in (
        ("Sarah Connor", "PERSON"),
        ("Sarah Lee", "PERSON"),
        ("+41 44 668 18 00", "PHONE_NUMBER"),
        ("D123-4567-8901", "DRIVING_LICENCE"),
    ):
        identifiers.add(Finding(0, len(text), entity, "regex", 0.9), text)
    detector = identifiers.detector()
    text = "SARAH called; connor's phone +41446681800, licence d12345678901, Lee. Sarahs no."
    found = {(text[f.start : f.end], f.entity) for f in detector.find(text)}
    assert found == {
        ("SARAH", "PERSON"),
        ("connor", "PERSON"),
        ("41446681800", "PHONE_NUMBER"),
        ("d12345678901", "DRIVING_LICENCE"),
        ("Lee", "PERSON"),
    }
    # A word of one found name stands for that name; a word two names share, for itself.
    assert detector.identify("connor") == ("PERSON", "sarahconnor")
    assert detector.identify("LEE") == ("PERSON", "sarahlee")
    assert detector.identify("Sarah") == ("PERSON", "sarah")
    assert detector.identify("Sarahs") is None


def test_regex_core_kinds_by_hand() -> None:
    text = (
        "I live at 221B Baker Street, born on 3 May 1988; passport number is X1234567, "
        "DL: D123-4567-8901, NI AB 12 34 56 C, SSN 536-22-8761, host 2001:db8::8a2e:370:7334. "
        "Not: the 10:30:45 train on 2024-11-24, my passport since 2019, Connor's dog."
    )
    found = {(f.entity, text[f.start : f.end]) for f in merge_findings(RegexDetector().find(text))}
    assert found == {
        ("STREET_ADDRESS", "221B Baker Street"),
        ("DATE_OF_BIRTH", "3 May 1988"),
        ("PASSPORT", "X1234567"),
        ("DRIVING_LICENCE", "D123-4567-8901"),
        ("NATIONAL_ID", "AB 12 34 56 C"),
        ("NATIONAL_ID", "536-22-8761"),
        ("IP_ADDRESS", "2001:db8::8a2e:370:7334"),
    }
