"""The report as one JSON document, for programs: every number, with its n and interval.

Trees are given as ``corix tree score --json`` gives them (one root per application),
with the dialogue ids behind every node. Empty values are ``null``, never 0.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict
from typing import Any

from corix.measurement import CorrelationMatrix, DefectRate, ScoreTable
from corix.report.content import ReportContent, TreeSection

FORMAT = "corix.report/1"


def _written(content: ReportContent) -> dict[str, Any]:
    """What the settings block adds once the report is written: what it measured and
    compared, its digest, when, by which corix, and where (as stored with its runs)."""
    written = content.written
    if written is None:
        return {}
    return {
        "digest": written.digest,
        "runs": list(written.runs),
        "series": written.series,
        "compare_runs": None if written.compare_runs is None else list(written.compare_runs),
        "compared_runs": list(written.compared_runs),
        "written_at": written.written_at.isoformat(),
        "corix_version": written.corix_version,
        "outputs": [output.model_dump(mode="json") for output in written.outputs],
    }


def report_document(content: ReportContent) -> dict[str, Any]:
    settings = content.settings
    return {
        "format": FORMAT,
        "run": {
            "id": content.run.id,
            "name": content.run.name,
            "status": content.run.status,
            "seed": content.run.seed,
            "created_at": content.run.created_at.isoformat(),
            "finished_at": content.run.finished_at.isoformat() if content.run.finished_at else None,
        },
        "settings": {
            "trees": [str(tree) for tree in settings.trees],
            "bootstrap": settings.bootstrap,
            "seed": settings.seed,
            "confidence": settings.confidence,
            "transcripts_per_group": settings.transcripts_per_group,
            "view_gap": settings.view_gap,
            **_written(content),
        },
        "measurement": {
            "digest": content.measurement.digest,
            "headline": content.headline,
            **content.measurement.model_dump(mode="json"),
            "settlement": content.settlement.to_json(),
        },
        "not_measurable": [
            {"session": d.session_id, "application": d.application, "reason": d.not_measurable}
            for d in content.not_measurable
        ],
        "applications": list(content.applications),
        "scenarios": list(content.scenarios),
        "levels": list(content.levels),
        "n_leaves": content.n_leaves,
        "annotators": [asdict(a) for a in content.annotators],
        "annotation_jobs": [
            {
                "run": job.run_id,
                "started_at": job.started_at.isoformat(),
                **job.settings.model_dump(mode="json"),
            }
            for job in content.annotation_jobs
        ],
        "respondents": [asdict(r) for r in content.respondents],
        "trees": {section.key: _tree(section) for section in content.trees},
        "history_runs": [asdict(run) for run in content.history_runs],
        "violation_rates": [_rate(rate) for rate in content.violation_rates],
        "violation_totals": [_rate(rate) for rate in content.violation_totals],
        "defect_rates": [_rate(rate) for rate in content.defect_rates],
        "defect_totals": [_rate(rate) for rate in content.defect_totals],
        "hit_at_k": [hit.model_dump(mode="json") for hit in content.hit_rates],
        "sequential": [record.model_dump(mode="json") for record in content.sequential],
        "cell_costs": [cost.model_dump(mode="json") for cost in content.cell_costs],
        "judge_corrected": [rate.model_dump(mode="json") for rate in content.judge_corrected],
        "harm_packs": {
            harm: {
                "title": pack.title,
                "version": pack.version,
                "threshold": pack.defect.threshold,
                "direction": pack.defect.direction.value,
            }
            for harm, pack in content.harm_packs.items()
        },
        "questionnaire": {
            "items": [asdict(item) for item in content.questionnaire.items],
            "comparisons": [_clean(asdict(c)) for c in content.questionnaire.comparisons],
        },
        "agreement": [
            {"a": pair.a, "b": pair.b, "questions": [r.model_dump() for r in pair.reports]}
            for pair in content.agreement
        ],
        "stability": [asdict(s) for s in content.stability],
        "sessions": [
            {
                "id": entry.id,
                "application": entry.application,
                "scenario": entry.scenario,
                "level": entry.level,
                "source": entry.source,
                "turns": entry.n_turns,
                "failed_turns": entry.n_failed_turns,
                "cut_turns": entry.n_cut_turns,
                "end_reason": entry.end_reason,
                "transcript_embedded": entry.transcript is not None,
            }
            for entry in content.sessions.entries
        ],
    }


def _tree(section: TreeSection) -> dict[str, Any]:
    spec = section.spec
    return {
        "title": spec.title,
        "tree": spec.name,
        "annotator_source": section.source,
        "scale": {"min": spec.scale.low, "max": spec.scale.high},
        "dimensions": list(section.dimensions),
        "applications": {app: root.to_json() for app, root in section.results.items()},
        "comparison": section.comparison.to_json(),
        "views": [_clean(asdict(gap)) for gap in section.views],
        "warnings": list(section.warnings),
        "correlations": {
            "dialogues": _matrix(section.dialogue_correlations),
            "applications": _matrix(section.application_correlations),
        },
        "history": {app: _history(table) for app, table in section.history.items()},
    }


def _history(table: ScoreTable) -> dict[str, Any]:
    document = table.to_json()
    document["runs"] = document.pop("rows")
    document["nodes"] = document.pop("columns")
    return document


def _matrix(matrix: CorrelationMatrix) -> dict[str, Any]:
    return {
        "names": list(matrix.names),
        "rho": [[_finite(v) for v in row] for row in matrix.rho.tolist()],
        "p_value": [[_finite(v) for v in row] for row in matrix.p_value.tolist()],
        "n": matrix.n.tolist(),
    }


def _rate(rate: DefectRate) -> dict[str, Any]:
    return rate.model_dump(mode="json")


def _clean(value: Any) -> Any:
    """Mappings and tuples as JSON objects and lists; NaN as ``null``."""
    if isinstance(value, Mapping):
        return {str(key): _clean(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(item) for item in value]
    if isinstance(value, float):
        return _finite(value)
    return value


def _finite(value: float) -> float | None:
    return None if math.isnan(value) else value
