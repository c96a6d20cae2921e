"""`corix release`: an anonymized, documented dataset of a run or a series, in two steps."""

from __future__ import annotations

from contextlib import closing
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from corix.cli.common import DbOption, console, database, fail
from corix.cli.progress import progress_for

if TYPE_CHECKING:
    from corix.release import ReleaseSettings
    from corix.storage import Database

DETECTORS = ("regex", "presidio")


SeriesOption = Annotated[
    str | None, typer.Option("--series", help="Release every run of this series.")
]
OutOption = Annotated[Path, typer.Option("--out", help="Folder the release is written to.")]
ReviewOption = Annotated[
    Path | None,
    typer.Option("--review", help="Private folder of the review (default: OUT.review)."),
]
DetectorOption = Annotated[
    str,
    typer.Option(
        "--detector",
        help="regex (the core, no extra) or presidio (adds people's names; the anonymize "
        "extra). The regex core always runs.",
    ),
]
MaskApplicationsOption = Annotated[
    bool,
    typer.Option("--mask-applications", help="Replace application names by pseudonyms."),
]
NamesOption = Annotated[
    Path | None,
    typer.Option("--names", help="File of names to redact wherever they occur, one a line."),
]
SaltFileOption = Annotated[
    Path | None,
    typer.Option(
        "--salt-file",
        help="Secret salt of the pseudonyms (default: a new one in the review folder); "
        "reuse it to keep pseudonyms stable across releases.",
    ),
]
LicenseOption = Annotated[str, typer.Option("--license", help="License of the release.")]
FinalizeOption = Annotated[
    bool,
    typer.Option("--finalize", help="Write the release from the confirmed review."),
]
ReviewedByOption = Annotated[
    str | None,
    typer.Option("--reviewed-by", help="Who confirmed the review (with --finalize)."),
]


def release_command(
    run: Annotated[str | None, typer.Argument(help="Run id (or --series NAME).")] = None,
    series: SeriesOption = None,
    out: OutOption = Path("release"),
    review: ReviewOption = None,
    detector: DetectorOption = "regex",
    mask_applications: MaskApplicationsOption = False,
    names: NamesOption = None,
    salt_file: SaltFileOption = None,
    license_id: LicenseOption = "CC-BY-4.0",
    finalize: FinalizeOption = False,
    reviewed_by: ReviewedByOption = None,
    db: DbOption = None,
) -> None:
    """Release a run or a series as an anonymized dataset with a datasheet and a manifest.

    First a draft lists every redaction in OUT.review/review.csv for a person to check.

    Then --finalize --reviewed-by NAME writes the release to OUT (see docs/formats.md).
    """
    from corix.release import REVIEW_FILE, ReleaseSettings, review_folder

    if out.exists() and not out.is_dir():
        raise fail(f"--out '{out}' is a file: a release is written to a folder")
    review_dir = review if review is not None else review_folder(out)
    if finalize:
        _finalize(db, out, review_dir, reviewed_by)
        return
    if detector not in DETECTORS:
        raise fail(f"unknown detector '{detector}'; known: {', '.join(DETECTORS)}")
    if (run is None) == (series is None):
        raise fail("give a run id or --series NAME (one of them)")
    with database(db) as database_:
        settings = ReleaseSettings(
            run_ids=_run_ids(database_, run, series),
            series=series,
            detector="presidio" if detector == "presidio" else "regex",
            mask_applications=mask_applications,
            names=_read_names(names) if names is not None else [],
            salt_file="",
            license=license_id,
        )
        found = _draft(database_, settings, review_dir, salt_file)
    console.print(
        f"{found} findings to review in {review_dir / REVIEW_FILE}; then "
        f"`corix release --out {out} --finalize --reviewed-by NAME`",
        soft_wrap=True,
    )


def _run_ids(db: Database, run: str | None, series: str | None) -> list[str]:
    from corix.storage import get_run, series_runs

    if run is not None:
        get_run(db, run)
    run_ids = [run] if run is not None else series_runs(db, str(series))
    if not run_ids:
        raise fail(f"no evaluation series named '{series}' with runs")
    return run_ids


def _draft(
    db: Database, settings: ReleaseSettings, review_dir: Path, salt_file: Path | None
) -> int:
    from corix.release import draft_release

    tracker = progress_for("scanning sessions for personal information")
    with closing(tracker):
        return draft_release(db, settings, review_dir, salt_file=salt_file, progress=tracker)


def _finalize(db: str | None, out: Path, review_dir: Path, reviewed_by: str | None) -> None:
    from corix.release import finalize_release

    if not reviewed_by:
        raise fail("--finalize needs --reviewed-by NAME: who confirmed the review")
    with database(db) as database_:
        tracker = progress_for("releasing sessions")
        with closing(tracker):
            released = finalize_release(
                database_, out, review_dir, reviewed_by=reviewed_by, progress=tracker
            )
    rows = ", ".join(f"{n} {table}" for table, n in released.rows.items())
    console.print(
        f"release written to {released.out}: {rows}; {released.redactions} redactions, "
        f"{released.kept} findings kept",
        soft_wrap=True,
    )


def _read_names(path: Path) -> list[str]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise fail(f"{path}: cannot read the names: {exc}") from None
    return [line.strip() for line in text.splitlines() if line.strip()]
