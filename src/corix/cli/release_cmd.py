"""`corix release`: an anonymized, documented dataset of a run or a series, in two steps."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from corix.cli.common import DbOption, console, database, fail
from corix.cli.progress import progress_for

DETECTORS = ("regex", "presidio")


def release_command(
    run: Annotated[str | None, typer.Argument(help="Run id (or --series NAME).")] = None,
    series: Annotated[
        str | None, typer.Option("--series", help="Release every run of this series.")
    ] = None,
    out: Annotated[Path, typer.Option("--out", help="Folder the release is written to.")] = Path(
        "release"
    ),
    review: Annotated[
        Path | None,
        typer.Option("--review", help="Private folder of the review (default: OUT.review)."),
    ] = None,
    detector: Annotated[
        str,
        typer.Option(
            "--detector",
            help="regex (the core, no extra) or presidio (adds people's names; the anonymize "
            "extra). The regex core always runs.",
        ),
    ] = "regex",
    mask_applications: Annotated[
        bool,
        typer.Option("--mask-applications", help="Replace application names by pseudonyms."),
    ] = False,
    names: Annotated[
        Path | None,
        typer.Option("--names", help="File of names to redact wherever they occur, one a line."),
    ] = None,
    salt_file: Annotated[
        Path | None,
        typer.Option(
            "--salt-file",
            help="Secret salt of the pseudonyms (default: a new one in the review folder); "
            "reuse it to keep pseudonyms stable across releases.",
        ),
    ] = None,
    license_id: Annotated[str, typer.Option("--license", help="License of the release.")] = (
        "CC-BY-4.0"
    ),
    finalize: Annotated[
        bool,
        typer.Option("--finalize", help="Write the release from the confirmed review."),
    ] = False,
    reviewed_by: Annotated[
        str | None,
        typer.Option("--reviewed-by", help="Who confirmed the review (with --finalize)."),
    ] = None,
    db: DbOption = None,
) -> None:
    """Release a run or a series as an anonymized dataset with a datasheet and a manifest.

    First a draft lists every redaction in OUT.review/review.csv for a person to check.

    Then --finalize --reviewed-by NAME writes the release to OUT (see docs/formats.md).
    """
    from corix.release import (
        REVIEW_FILE,
        ReleaseSettings,
        draft_release,
        finalize_release,
        review_folder,
    )
    from corix.storage import get_run, series_runs

    if out.exists() and not out.is_dir():
        raise fail(f"--out '{out}' is a file: a release is written to a folder")
    review_dir = review if review is not None else review_folder(out)
    if finalize:
        if not reviewed_by:
            raise fail("--finalize needs --reviewed-by NAME: who confirmed the review")
        with database(db) as database_:
            tracker = progress_for(console, "releasing sessions")
            try:
                released = finalize_release(
                    database_, out, review_dir, reviewed_by=reviewed_by, progress=tracker
                )
            finally:
                tracker.close()
        rows = ", ".join(f"{n} {table}" for table, n in released.rows.items())
        console.print(
            f"release written to {released.out}: {rows}; {released.redactions} redactions, "
            f"{released.kept} findings kept",
            soft_wrap=True,
        )
        return
    if detector not in DETECTORS:
        raise fail(f"unknown detector '{detector}'; known: {', '.join(DETECTORS)}")
    if (run is None) == (series is None):
        raise fail("give a run id or --series NAME (one of them)")
    with database(db) as database_:
        if run is not None:
            get_run(database_, run)
        run_ids = [run] if run is not None else series_runs(database_, str(series))
        if not run_ids:
            raise fail(f"no evaluation series named '{series}' with runs")
        settings = ReleaseSettings(
            run_ids=run_ids,
            series=series,
            detector="presidio" if detector == "presidio" else "regex",
            mask_applications=mask_applications,
            names=_read_names(names) if names is not None else [],
            salt_file="",
            license=license_id,
        )
        tracker = progress_for(console, "scanning sessions for personal information")
        try:
            found = draft_release(
                database_, settings, review_dir, salt_file=salt_file, progress=tracker
            )
        finally:
            tracker.close()
    console.print(
        f"{found} findings to review in {review_dir / REVIEW_FILE}; then "
        f"`corix release --out {out} --finalize --reviewed-by NAME`",
        soft_wrap=True,
    )


def _read_names(path: Path) -> list[str]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise fail(f"{path}: cannot read the names: {exc}") from None
    return [line.strip() for line in text.splitlines() if line.strip()]
