"""Writing a dataset release in two steps: draft a review, then finalize the release.

``draft_release`` finds every piece of personal information the release would redact and
writes it to ``review.csv`` in a private review folder, beside the settings and the salt.
A person reads it, keeps what is not personal, adds what detection missed, and then
``finalize_release`` writes the release: anonymized tables, the specification of the
settled labels, a datasheet (the ``README.md`` that Hugging Face ``datasets`` loads the
folder by) and a manifest with checksums. The release appears whole or not at all; if the
record changed since the review was drafted, nothing is written.

Both steps read the record twice, streamed: first to collect every identifier a detector
finds anywhere in the release, then to find each of them wherever it recurs, so one found
in one turn is never left in clear in another (``corix.release.recurrence``).
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from corix import __version__
from corix.config import write_atomically
from corix.errors import CorixError
from corix.measurement import Measurement, measure
from corix.release.datasheet import ReleaseStats, render_datasheet
from corix.release.pii import LOOKED_FOR, PiiDetector
from corix.release.presidio import PRESIDIO_LOOKS_FOR, PresidioDetector
from corix.release.pseudonyms import Pseudonymizer, new_salt, read_salt
from corix.release.recurrence import Identifiers
from corix.release.review import Review, read_review, write_review
from corix.release.scrub import Located, Scrubber
from corix.report import (
    TABLES,
    UNWATCHED,
    CsvTables,
    Progress,
    table_rows,
    write_dataset_card,
    write_measurement,
)
from corix.storage import Database, get_run, usernames

__all__ = [
    "REVIEW_FILE",
    "ReleaseSettings",
    "draft_release",
    "finalize_release",
    "review_folder",
]

REVIEW_FILE = "review.csv"
SETTINGS_FILE = "release.json"
SALT_FILE = "salt"
MANIFEST_FILE = "MANIFEST.json"


class ReleaseSettings(BaseModel):
    """What a draft was made with; finalizing uses the same, so the findings match."""

    run_ids: list[str]
    series: str | None = None
    detector: Literal["regex", "presidio"] = "regex"
    mask_applications: bool = False
    names: list[str] = []
    salt_file: str
    license: str = "CC-BY-4.0"


@dataclass(frozen=True)
class Released:
    out: Path
    rows: dict[str, int]
    redactions: int
    kept: int


def review_folder(out: Path) -> Path:
    """The private folder beside a release that holds its review, settings and salt."""
    return out.with_name(out.name + ".review")


def draft_release(
    db: Database,
    settings: ReleaseSettings,
    review_dir: Path,
    *,
    salt_file: Path | None,
    progress: Progress = UNWATCHED,
) -> int:
    """Write the review of everything the release would redact; return how many findings."""
    review = review_dir / REVIEW_FILE
    if review.exists():
        raise CorixError(
            f"a review is already drafted in {review_dir}: finalize it with --finalize, "
            "or delete the folder to draft again"
        )
    review_dir.mkdir(parents=True, exist_ok=True)
    if salt_file is None:
        salt_file = review_dir / SALT_FILE
        salt = new_salt(salt_file)
    else:
        salt = read_salt(salt_file)
    settings = settings.model_copy(update={"salt_file": str(salt_file.resolve())})
    measurement = measure(db, settings.run_ids)
    scrubber = _scrubber(db, settings, measurement, Pseudonymizer(salt), Review())
    progress = _TwoPasses(progress)
    _learn_identifiers(db, scrubber, measurement, progress)
    found = (
        located
        for table, row in table_rows(db, measurement, progress)
        for located in scrubber.locate(table, row)
    )
    count = write_review(review, found)
    write_atomically(review_dir / SETTINGS_FILE, settings.model_dump_json(indent=1))
    return count


def read_settings(review_dir: Path) -> ReleaseSettings:
    path = review_dir / SETTINGS_FILE
    if not path.exists():
        raise CorixError(f"no drafted review in {review_dir}: run without --finalize first")
    return ReleaseSettings.model_validate_json(path.read_text(encoding="utf-8"))


def finalize_release(
    db: Database,
    out: Path,
    review_dir: Path,
    *,
    reviewed_by: str,
    progress: Progress = UNWATCHED,
) -> Released:
    """Write the release the reviewed findings describe, whole or not at all."""
    if out.exists() and any(out.iterdir()):
        raise CorixError(f"{out} already holds files: give an empty or new folder")
    settings = read_settings(review_dir)
    review_path = review_dir / REVIEW_FILE
    review = read_review(review_path)
    pseudonyms = Pseudonymizer(read_salt(Path(settings.salt_file)))
    measurement = measure(db, settings.run_ids)
    scrubber = _scrubber(db, settings, measurement, pseudonyms, review)
    progress = _TwoPasses(progress)
    _learn_identifiers(db, scrubber, measurement, progress)
    redacted = review.redacted_replacements | {
        scrubber.replacement(entity, term)[1] for term, entity in review.added
    }
    partial = out.with_name(out.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    stats = ReleaseStats()
    try:
        with CsvTables(partial) as tables:
            for table, row in table_rows(db, measurement, progress):
                chosen = list(_reviewed(scrubber.locate(table, row), review, redacted))
                stats.redactions.update(located.finding.entity for located in chosen)
                released = scrubber.released(table, row, chosen)
                stats.count(table, released)
                tables.write(table, released)
        write_measurement(measurement, partial)
        runs = [get_run(db, run_id) for run_id in settings.run_ids]
        title = f"ARIA dataset release: {settings.series or runs[0].name}"
        body = render_datasheet(
            stats,
            title=title,
            runs=runs,
            settling=measurement.spec.spec.settling,
            detectors=_detectors_looked_for(settings),
            kept=review.kept,
            masked_applications=settings.mask_applications,
            license_id=settings.license,
        )
        write_dataset_card(
            partial, TABLES, tables.counts, body, default="turns", license_id=settings.license
        )
        _write_manifest(partial, settings, pseudonyms, review_path, reviewed_by, tables.counts)
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    if out.exists():
        out.rmdir()
    partial.rename(out)
    return Released(out, dict(tables.counts), sum(stats.redactions.values()), review.kept)


class _TwoPasses:
    """One progress over both passes: the sessions are planned twice over."""

    def __init__(self, progress: Progress) -> None:
        self._progress = progress
        self._planned = False

    def planned(self, total: int) -> None:
        if not self._planned:
            self._progress.planned(2 * total)
            self._planned = True

    def advance(self) -> None:
        self._progress.advance()


def _learn_identifiers(
    db: Database, scrubber: Scrubber, measurement: Measurement, progress: Progress
) -> None:
    """The first pass: every identifier any detector finds anywhere in the release."""
    identifiers = Identifiers()
    for table, row in table_rows(db, measurement, progress):
        scrubber.collect(table, row, identifiers)
    scrubber.learn(identifiers)


def _reviewed(found: Iterator[Located], review: Review, redacted: set[str]) -> Iterator[Located]:
    """The findings to redact: those of an identifier the review redacts anywhere (its
    replacement is one in every row), or covering a term a person added. A finding is
    kept in clear only where the reviewer kept every finding of its identifier."""
    for located in found:
        decision = review.decisions.get(located.id)
        if located.replacement in redacted:
            decision = "redact"
        elif decision is None:
            covered = located.text.lower()
            if not any(term.lower() in covered for term, _ in review.added):
                raise CorixError(
                    f"the record changed since the review was drafted: {located.table} "
                    f"row {located.row}, column {located.column} has a finding the review "
                    "does not list; delete the review folder and draft again"
                )
            decision = "redact"
        if decision == "redact":
            yield located


def _scrubber(
    db: Database,
    settings: ReleaseSettings,
    measurement: Measurement,
    pseudonyms: Pseudonymizer,
    review: Review,
) -> Scrubber:
    detectors: list[PiiDetector] = [PresidioDetector()] if settings.detector == "presidio" else []
    return Scrubber(
        pseudonyms,
        usernames=usernames(db).values(),
        extra_terms=[*((name, "PERSON") for name in settings.names), *review.added],
        applications={dialogue.application for dialogue in measurement.dialogues},
        mask_applications=settings.mask_applications,
        detectors=detectors,
    )


def _detectors_looked_for(settings: ReleaseSettings) -> list[tuple[str, list[str]]]:
    """Each detector the release ran, with the kinds of identifier it looked for."""
    looked_for = [("regex core", list(LOOKED_FOR.values()))]
    if settings.detector == "presidio":
        looked_for.append(("Presidio on spaCy's small English model", list(PRESIDIO_LOOKS_FOR)))
    return looked_for


def _write_manifest(
    folder: Path,
    settings: ReleaseSettings,
    pseudonyms: Pseudonymizer,
    review_path: Path,
    reviewed_by: str,
    rows: dict[str, int],
) -> None:
    files = [
        {
            "path": path.name,
            "sha256": _sha256(path),
            "bytes": path.stat().st_size,
            **({"rows": rows[path.stem]} if path.suffix == ".csv" else {}),
        }
        for path in sorted(folder.iterdir())
    ]
    manifest = {
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "corix_version": __version__,
        "runs": settings.run_ids,
        "series": settings.series,
        "license": settings.license,
        "anonymization": {
            "detector": settings.detector,
            "applications_masked": settings.mask_applications,
            "salt_fingerprint": pseudonyms.fingerprint,
            "review_sha256": _sha256(review_path),
            "reviewed_by": reviewed_by,
        },
        "files": files,
    }
    text = json.dumps(manifest, indent=1, ensure_ascii=False)
    write_atomically(folder / MANIFEST_FILE, text + "\n")


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
