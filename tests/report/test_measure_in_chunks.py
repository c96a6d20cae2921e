"""Settling a chunk of sessions at a time gives exactly the labels of the whole-run measure.

The record: six sessions over two runs (a series), annotated by a reference rule, an LLM
with repeats (ties among them), two people whose passes disagree (one disagreement a
senior resolved, one left open), a failed pass, a harm severity, and a session the
application never answered (not measurable, though annotated). Chunks of one, two and
three sessions cut across annotators, runs and ties.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path

import pytest
from typer.testing import CliRunner

from corix.cli.main import app
from corix.errors import CorixError
from corix.measurement.core import ChunkedMeasurement, measure, measure_in_chunks
from corix.measurement.labels.settle import Label, SettledRecord, Verdict
from corix.measurement.spec import AnnotatorSelector, MeasurementSpec
from corix.storage import Database
from support.run_builder import RunBuilder
from support.web_records import resolve

RA = "risk_assessment"
RELEASED, WITHHELD = "ra_prohibited_released", "ra_permitted_withheld"


async def _write_run(db: Database, run_id: str, prefix: str) -> list[str]:
    run = RunBuilder(run_id)
    ids = [f"{prefix}{n}" for n in range(3)]
    for sid in ids:
        run.session(sid, "alpha", "tv_spoilers", "model_testing", [("Who dies?", "No spoilers.")])
    run.session(f"{prefix}x", "beta", "tv_spoilers", "red_teaming", [("Hi", None)])  # no reply
    for n, sid in enumerate([*ids, f"{prefix}x"]):
        said = "yes" if n % 2 else "no"
        run.annotate(sid, RA, "reference", [(RELEASED, None, said), (WITHHELD, None, "no")])
        for repeat, released in enumerate(("yes", "no") if n != 1 else ("yes", "yes", "no")):
            run.annotate(sid, RA, "llm:mock", [(RELEASED, None, released)], repeat_no=repeat)
        for pass_no, released in enumerate(("no", "yes")):
            run.annotate(sid, RA, "human:ann1", [(RELEASED, None, released)], pass_no=pass_no)
        run.annotate(sid, RA, "human:ann2", [(RELEASED, None, said)], guideline_version="g-2")
        run.annotate(sid, "harm:groundedness", "reference", [("severity", None, float(n + 2))])
    run.annotate(ids[2], "dialogue_utility", "llm:mock", [], status="failed")
    run.annotate(ids[1], RA, "llm:flaky", [], status="failed")
    await run.write(db)
    return ids


@pytest.fixture
async def series(any_db: Database) -> list[str]:
    """The two runs, on SQLite and on PostgreSQL (the test takes the same ``any_db``)."""
    first = await _write_run(any_db, "run-a", "a")
    await _write_run(any_db, "run-b", "b")
    resolve(any_db, first[0], RA, RELEASED, "resolved", "no")
    resolve(any_db, first[2], RA, RELEASED, "unresolved")
    return ["run-a", "run-b"]


def _joined(chunked: ChunkedMeasurement) -> SettledRecord:
    labels: list[Label] = []
    verdicts: list[Verdict] = []
    failed: dict[tuple[str, str, str], int] = {}
    for chunk in chunked.chunks():
        assert len(chunk.dialogues) <= chunked.sessions_per_chunk
        labels.extend(chunk.record.labels)
        verdicts.extend(chunk.record.verdicts)
        failed.update(chunk.record.failed)
    return SettledRecord(tuple(labels), tuple(verdicts), failed)


@pytest.mark.parametrize(
    "spec",
    [
        MeasurementSpec(),
        MeasurementSpec(settling="majority", use_resolutions=False),
        MeasurementSpec(settling="keep-disagreement", harms=("guardrail_violation",)),
        MeasurementSpec(annotators=(AnnotatorSelector(kind="human"),)),
    ],
    ids=["defaults", "majority-without-resolutions", "keep-disagreement", "people-only"],
)
@pytest.mark.parametrize("size", [1, 2, 3, 100])
def test_chunks_settle_exactly_the_labels_of_the_whole_run(
    any_db: Database, series: Sequence[str], spec: MeasurementSpec, size: int
) -> None:
    whole = measure(any_db, series, spec)
    chunked = measure_in_chunks(any_db, series, spec, sessions_per_chunk=size)
    joined = _joined(chunked)
    assert joined.labels == whole.labels
    assert joined.verdicts == whole.verdicts
    assert joined.failed == whole.record.failed
    assert chunked.spec.digest == whole.spec.digest


def test_the_record_has_what_the_comparison_must_cover(
    any_db: Database, series: Sequence[str]
) -> None:
    measured = measure(any_db, series)
    labels = measured.labels
    assert list(measured.record.failed) == [
        ("a1", "llm:flaky", "guardrail_violation"),
        ("b1", "llm:flaky", "guardrail_violation"),
    ]
    assert {label.annotator for label in labels} == {
        "reference",
        "llm:mock",
        "human:ann1",
        "human:ann2",
    }
    assert any(label.settled.tie for label in labels)
    assert any(label.resolved for label in labels)
    assert {label.dialogue.run_id for label in labels} == {"run-a", "run-b"}
    # The sessions without a reply were annotated, yet give no label.
    assert not [label for label in labels if label.dialogue.session_id.endswith("x")]


def test_a_specification_that_matches_nothing_fails_before_any_chunk(
    any_db: Database, series: Sequence[str]
) -> None:
    nobody = MeasurementSpec(annotators=(AnnotatorSelector(name="nobody"),))
    with pytest.raises(CorixError, match="annotators"):
        measure_in_chunks(any_db, series, nobody)
    with pytest.raises(CorixError, match="harms"):
        measure_in_chunks(any_db, series, MeasurementSpec(harms=("no_such_harm",)))
    by_version = MeasurementSpec(annotators=(AnnotatorSelector(guideline_version="g-2"),))
    assert measure_in_chunks(any_db, series, by_version).spec.spec == by_version


def test_the_export_writes_the_chunked_labels(
    any_db: Database, series: Sequence[str], tmp_path: Path
) -> None:
    out = tmp_path / "tables"
    shown = CliRunner().invoke(
        app, ["export", series[0], "--format", "csv", "--output", str(out), "--db", any_db.url]
    )
    assert shown.exit_code == 0, shown.output
    with (out / "settled_labels.csv").open(newline="", encoding="utf-8") as handle:
        written = [
            (row["session_id"], row["annotator"], row["value"]) for row in csv.DictReader(handle)
        ]
    expected = [
        (label.dialogue.session_id, label.annotator, str(value))
        for label in measure(any_db, [series[0]]).labels
        for value in label.settled.values
    ]
    assert written == expected
