"""Which runs a report compares over time, and their trees.

Unless the runs are named, a report compares its run with the earlier runs in the same
database that share at least one application name with it (the latest ``limit`` of
them, complete or not, oldest first). Earlier runs are scored without intervals: the
table over time shows values and counts; each run's own report has its intervals.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from corix.measurement import (
    MeasurementSpec,
    NodeResult,
    ScoreTable,
    TreeSpec,
    compare_runs,
    dimension_ids,
    score_tree,
    stored_leaves,
)
from corix.storage import Database, RunRecord, get_run, list_runs, run_applications


@dataclass(frozen=True)
class RunLabel:
    id: str
    name: str
    created: str


def related_runs(
    db: Database, run_id: str, *, named: Sequence[str] | None = None, limit: int = 5
) -> list[RunRecord]:
    """The runs to compare ``run_id`` with, oldest first, ``run_id`` last.

    ``named`` runs are taken as given (each must exist); otherwise the earlier runs that
    share an application with ``run_id``, at most ``limit``.
    """
    current = get_run(db, run_id)
    if named is not None:
        others = [get_run(db, other) for other in dict.fromkeys(named) if other != run_id]
        others.sort(key=lambda run: run.created_at)
        return [*others, current]
    applications = run_applications(db, run_id)
    earlier: list[RunRecord] = []
    candidates = [
        run for run in list_runs(db) if run.created_at < current.created_at and run.id != run_id
    ]
    for run in reversed(candidates):  # latest first
        if len(earlier) == limit:
            break
        if run_applications(db, run.id) & applications:
            earlier.append(run)
    return [*reversed(earlier), current]


def history_tables(
    db: Database,
    runs: Sequence[RunRecord],
    spec: TreeSpec,
    current: Mapping[str, NodeResult],
    source: str | None,
    measurement: MeasurementSpec,
) -> dict[str, ScoreTable]:
    """Application → run × dimension table; the last run's results are ``current``.

    Earlier runs are measured with the same specification and annotator ``source``."""
    scored: dict[str, Mapping[str, NodeResult]] = {}
    for run in runs[:-1]:
        leaves = stored_leaves(db, run.id, measurement)
        if source is not None:
            leaves = leaves.for_annotator_kind(source)
        scored[run.id] = score_tree(spec, leaves)
    scored[runs[-1].id] = current
    dimensions = [*dimension_ids(spec)]
    return {
        application: compare_runs(scored, application, dimensions)
        for application in sorted(current)
    }


def run_label(run: RunRecord) -> RunLabel:
    return RunLabel(run.id, run.name, run.created_at.strftime("%Y-%m-%d %H:%M"))
