"""Which dialogues people label next: the allocation rule and the plan over a stored run."""

from __future__ import annotations

import pytest

from corix.measurement import measure
from corix.measurement.label_plan import Stratum, allocate, plan_labels
from corix.storage import Database
from support.testers_run import write_partly_labelled_run


def _open(n: int) -> tuple[str, ...]:
    return tuple(f"s{i}" for i in range(n))


def test_a_stratums_variance_term_by_hand() -> None:
    # 10 of 40 dialogues, 1 defect in 4 labels: p = 1.5/5 = 0.3, (10/40)² · 0.3 · 0.7 / 6
    stratum = Stratum(size=10, labelled=4, defects=1, unlabelled=_open(6))
    assert stratum.variance_term(40) == pytest.approx(0.0625 * 0.21 / 6)
    assert stratum.variance_term(40, extra=2) == pytest.approx(0.0625 * 0.21 / 8)


def test_the_next_label_goes_where_the_judges_verdict_is_least_certain() -> None:
    # judge yes: 10 unlabelled (p = 0.5, cut 0.01 · 0.25 · (1/2 − 1/3) = 0.000417);
    # judge no: 90, 20 labelled with no defect (p = 0.5/21, cut ≈ 0.000037)
    flagged = Stratum(10, 0, 0, _open(10))
    cleared = Stratum(90, 20, 0, _open(70))
    assert allocate([(flagged, cleared)], 1) == [(1, 0)]
    assert allocate([(flagged, cleared)], 30)[0][0] == 10  # the stratum runs out


def test_the_widest_share_of_variance_first_across_cells_and_never_beyond_the_dialogues() -> None:
    thin = (Stratum(10, 0, 0, _open(10)), Stratum(90, 0, 0, _open(90)))
    known = (Stratum(10, 10, 5, ()), Stratum(90, 90, 9, ()))
    # the thin cell's judge-no stratum holds 0.9² of its weight: its first labels go there
    assert allocate([known, thin], 5) == [(0, 0), (0, 5)]
    assert sum(map(sum, allocate([known, thin], 500))) == 100


async def test_the_plan_chooses_unlabelled_dialogues_and_expects_a_narrower_interval(
    sqlite_db: Database,
) -> None:
    run_id = await write_partly_labelled_run(sqlite_db)
    plan = plan_labels(measure(sqlite_db, [run_id]), judge="llm", reference="human", budget=5)
    chosen = [d.session_id for d in plan.dialogues]
    assert len(chosen) == 5 and not {"j0", "j1", "j10", "j11", "j12", "j13"} & set(chosen)
    assert all(d.judge_verdict == (int(d.session_id[1:]) < 4) for d in plan.dialogues)
    (cell,) = plan.cells
    assert (cell.judged, cell.judge_yes, cell.labelled_yes, cell.labelled_no) == (20, 4, 2, 4)
    assert cell.add_yes + cell.add_no == 5 and cell.add_yes <= 2
    assert cell.width_now is not None and cell.width_expected is not None
    assert 0 < cell.width_expected < cell.width_now
    again = plan_labels(measure(sqlite_db, [run_id]), judge="llm", reference="human", budget=5)
    assert again == plan  # reproducible
