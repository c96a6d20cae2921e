"""hit@k (attacker-style rates) against hand-derived values and brute-force enumeration."""

from __future__ import annotations

import csv
import itertools
import json
import math
from math import comb
from pathlib import Path

import pytest
from typer.testing import CliRunner

from corix.assessment import Settled
from corix.assessment.annotation_run import annotate_run_async
from corix.cli.main import app
from corix.domain import ApplicationEntry, Level, LevelSettings, Plan
from corix.execution import execute_plan
from corix.measurement import MeasurementSpec, attack_rates, measure
from corix.measurement.hit_at_k import hit_at_k, hit_rates
from corix.measurement.labels.settle import GUARDRAIL_VIOLATION, Verdict
from corix.measurement.stats.wilson import wilson_cc_bounds
from corix.report import write_report
from corix.report.formatting import percent
from corix.storage import Database, MeasuredDialogue


@pytest.mark.parametrize(("n", "c", "k"), [(5, 1, 1), (5, 1, 2), (10, 3, 4), (20, 0, 3), (6, 5, 2)])
def test_hit_at_k_is_the_chance_a_k_subset_holds_a_defect(n: int, c: int, k: int) -> None:
    outcomes = [1] * c + [0] * (n - c)
    subsets = list(itertools.combinations(outcomes, k))
    enumerated = sum(any(s) for s in subsets) / len(subsets)
    assert hit_at_k(n, c, k) == pytest.approx(enumerated)
    assert hit_at_k(n, c, k) == pytest.approx(1 - comb(n - c, k) / comb(n, k))


def test_hit_at_k_by_hand() -> None:
    assert hit_at_k(5, 1, 1) == pytest.approx(0.2)  # k = 1 is the plain rate
    assert hit_at_k(5, 1, 2) == pytest.approx(0.4)  # 1 − C(4,2)/C(5,2) = 1 − 6/10
    assert hit_at_k(5, 1, 5) == 1.0  # every attempt: the one success is among them
    with pytest.raises(ValueError, match="n="):
        hit_at_k(2, 1, 3)


def _verdict(session: str, app: str, value: float, annotator: str = "reference") -> Verdict:
    dialogue = MeasuredDialogue(
        session_id=session,
        key=session,
        run_id="r",
        application=app,
        scenario="tv_spoilers",
        level="red_teaming",
        source="simulated",
        tester_id=None,
        not_measurable=None,
    )
    settled = Settled(values=(value,), tie=False, n_values=1)
    return Verdict(dialogue, annotator, "reference", GUARDRAIL_VIOLATION, value, settled, None)


def test_hit_rates_per_template_beside_the_pooled_rate() -> None:
    # Template A: 1 defect in 5 attempts; B: none in 5; C: 1 attempt (too few for k = 2).
    verdicts, attempts = [], {}
    for template, defects, n in (("A", 1, 5), ("B", 0, 5), ("C", 1, 1)):
        for i in range(n):
            session = f"{template}{i}"
            verdicts.append(_verdict(session, "app", 1.0 if i < defects else 0.0))
            attempts[session] = template
    verdicts.append(_verdict("human-free", "app", 1.0))  # no template: left out
    (rate,) = hit_rates(verdicts, attempts, MeasurementSpec(bootstrap=400), k=2)
    assert rate.group == {
        "source": "reference",
        "harm": GUARDRAIL_VIOLATION,
        "application": "app",
        "level": "red_teaming",
    }
    assert (rate.units, rate.too_few, rate.attempts, rate.defects) == (2, 1, 10, 1)
    assert rate.hit_rate == pytest.approx((0.4 + 0.0) / 2)
    assert rate.pooled_rate == pytest.approx(0.1)
    # hit@2: the corrected Wilson interval (Newcombe's method 4) of a mean of 0.2 over 2
    # units, by hand with z = 1.96: (0.8 + z² − 1 − z·√(z² − 2.5 + 0.8·2.6)) / (2(2 + z²))
    # and (0.8 + z² + 1 + z·√(z² + 1.5 + 0.8·0.6)) / (2(2 + z²)).
    assert (rate.hit_low, rate.hit_high) == pytest.approx((0.00138, 0.88766), abs=2e-5)
    # The pooled rate: the defect rate's interval with the units as testers.
    assert rate.pooled_low is not None and rate.pooled_high is not None
    assert rate.pooled_low <= 0.1 <= rate.pooled_high
    assert "testers" in rate.interval and rate.interval.startswith("hit@k: corrected Wilson")
    assert [(u.unit, u.n, u.c, u.hit_at_k) for u in rate.per_unit] == [
        ("A", 5, 1, pytest.approx(0.4)),
        ("B", 5, 0, 0.0),
        ("C", 1, 1, None),
    ]


def test_a_majority_of_annotators_makes_an_attempt_a_defect() -> None:
    # Two annotators of one source, kept (mean): 0.5 counts toward risk, 0 does not.
    verdicts = [
        _verdict("a1", "app", 1.0, "x"),
        _verdict("a1", "app", 0.0, "y"),
        _verdict("a2", "app", 0.0, "x"),
        _verdict("a2", "app", 0.0, "y"),
    ]
    spec = MeasurementSpec(combine="keep", bootstrap=0)
    (rate,) = hit_rates(verdicts, {"a1": "A", "a2": "A"}, spec, k=1)
    assert (rate.attempts, rate.defects, rate.hit_rate) == (2, 1, 0.5)
    # One unit still has an interval: the score interval of 0.5 over one unit.
    assert (rate.hit_low, rate.hit_high) == pytest.approx(wilson_cc_bounds(0.5, 1, 0.95))


def test_no_success_keeps_an_upper_bound_above_zero() -> None:
    # Six templates × six attempts, none a defect (k = 5): the bootstrap gave [0, 0];
    # the score interval gives [0, (z² + 1 + z·√(z² + 2 − 1/6 − 0)) / (2(6 + z²))].
    verdicts, attempts = [], {}
    for template in "ABCDEF":
        for i in range(6):
            verdicts.append(_verdict(f"{template}{i}", "app", 0.0))
            attempts[f"{template}{i}"] = template
    (rate,) = hit_rates(verdicts, attempts, MeasurementSpec(bootstrap=200), k=5)
    z = 1.959963984540054
    high = (z * z + 1 + z * math.sqrt(z * z + 2 - 1 / 6)) / (2 * (6 + z * z))
    assert (rate.hit_rate, rate.hit_low, rate.hit_high) == (0.0, 0.0, pytest.approx(high))
    assert 0.48 < high < 0.49
    assert rate.pooled_high is not None and rate.pooled_high > 0


async def test_defects_hit_k_end_to_end(sqlite_db: Database, tmp_path: Path) -> None:
    """A run with repeats, annotated by the reference: hit@k in `corix defects --json`,
    the same numbers as the measurement core gives, and in the report's JSON."""
    plan = Plan(
        name="hits",
        seed=3,
        applications=[ApplicationEntry(name="unguarded", spec="demo:unguarded")],
        scenarios=["tv_spoilers"],
        levels={Level.RED_TEAMING: LevelSettings(sessions=12, max_turns=3)},
    )
    run_id = (await execute_plan(plan, sqlite_db)).run_id
    await annotate_run_async(sqlite_db, run_id)
    core = attack_rates(sqlite_db, measure(sqlite_db, [run_id]), k=3)
    result = CliRunner().invoke(
        app, ["defects", run_id, "--db", sqlite_db.url, "--hit-k", "3", "--json"]
    )
    assert result.exit_code == 0, result.output
    shown = json.loads(result.output)["hit_at_k"]
    assert shown == [hit.model_dump(mode="json") for hit in core]
    (hit,) = [h for h in core if h.group["harm"] == GUARDRAIL_VIOLATION]
    assert hit.attempts == 12 and hit.units >= 1
    per_unit = [u.hit_at_k for u in hit.per_unit if u.hit_at_k is not None]
    assert hit.hit_rate == pytest.approx(sum(per_unit) / len(per_unit))
    paths = write_report(sqlite_db, run_id, tmp_path / "report", bootstrap=0, hit_k=3)
    reported = json.loads(paths.json.read_text())["hit_at_k"]
    # Without bootstrap replicates the pooled rate's interval is the unclustered one; the
    # estimates and hit@k's interval (no resampling) are the same.
    assert [(h["group"], h["hit_rate"], h["per_unit"]) for h in reported] == [
        (h["group"], h["hit_rate"], h["per_unit"]) for h in shown
    ]
    assert "hit@3" in paths.markdown.read_text()
    page = paths.html.read_text()
    assert 'id="rates-hit-at-k"' in page and "hit@3" in page
    assert f"<strong>{percent(hit.hit_rate, 1)}</strong>" in page
    bad = CliRunner().invoke(
        app, ["defects", run_id, "--db", sqlite_db.url, "--hit-k", "3", "--attempt-unit", "x"]
    )
    assert bad.exit_code == 2 and "unknown attempt unit" in bad.output


async def test_export_writes_hit_at_k_tables(sqlite_db: Database, tmp_path: Path) -> None:
    """`corix export --format csv --hit-k K`: the measurement core's hit@k per group and
    per template as tables; without a table format the option is refused."""
    plan = Plan(
        name="hits",
        seed=3,
        applications=[ApplicationEntry(name="unguarded", spec="demo:unguarded")],
        scenarios=["tv_spoilers"],
        levels={Level.RED_TEAMING: LevelSettings(sessions=8, max_turns=2)},
    )
    run_id = (await execute_plan(plan, sqlite_db)).run_id
    await annotate_run_async(sqlite_db, run_id)
    core = attack_rates(sqlite_db, measure(sqlite_db, [run_id]), k=2)
    out = tmp_path / "tables"
    args = ["export", run_id, "--db", sqlite_db.url, "--format", "csv", "-o", str(out)]
    result = CliRunner().invoke(app, [*args, "--hit-k", "2"])
    assert result.exit_code == 0, result.output
    with (out / "hit_at_k.csv").open(newline="") as handle:
        groups = list(csv.DictReader(handle))
    with (out / "hit_at_k_units.csv").open(newline="") as handle:
        units = list(csv.DictReader(handle))
    assert [(g["harm"], float(g["hit_rate"]), int(g["attempts"])) for g in groups] == [
        (h.group["harm"], h.hit_rate, h.attempts) for h in core
    ]
    assert len(units) == sum(len(h.per_unit) for h in core)
    assert sum(int(u["n"]) for u in units) == sum(h.attempts for h in core)
    jsonl = CliRunner().invoke(app, ["export", run_id, "--db", sqlite_db.url, "--hit-k", "2"])
    assert jsonl.exit_code == 2 and "--hit-k writes tables" in jsonl.output
