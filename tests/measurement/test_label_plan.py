"""Which dialogues people label next: the allocation rule and the plan over a stored run."""

from __future__ import annotations

import pytest

from corix.measurement import measure
from corix.measurement.sizing.label_information import Information
from corix.measurement.sizing.label_plan import Stratum, allocate, pair_counts, plan_labels
from corix.storage import Database
from support.testers_run import write_partly_labelled_run


def _open(n: int) -> tuple[str, ...]:
    return tuple(f"s{i}" for i in range(n))


def test_a_cells_information_by_hand_when_the_judge_is_never_wrong_on_its_labels() -> None:
    # All 100 labelled, 10 "yes" all defects, 90 "no" all clean (smoothed: 10.5/11 and
    # 0.5/91). The rate's variance is then about q(1 − q)/N, the judge's "yes" share's,
    # plus each stratum's w²·p(1 − p)/(n + 1) (the large-sample stratified formula).
    cell = pair_counts((Stratum(10, 10, 10, ()), Stratum(90, 90, 0, ())))
    (sd,) = Information([cell]).sd()
    q, ppv, missed = 0.1, 10.5 / 11, 0.5 / 91
    by_hand = (
        (ppv - missed) ** 2 * q * (1 - q) / 100
        + q**2 * ppv * (1 - ppv) / 11
        + (1 - q) ** 2 * missed * (1 - missed) / 91
    )
    assert sd**2 == pytest.approx(by_hand, rel=1e-6)


def test_more_labels_never_widen_and_the_update_matches_a_fresh_count() -> None:
    pair = (Stratum(30, 5, 2, _open(25)), Stratum(170, 20, 1, _open(150)))
    information = Information([pair_counts(pair)])
    (now,) = information.sd()
    (after,) = information.sd_after(0, 1, 40)
    assert after < now
    information.add(0, 1, 40)
    assert information.sd()[0] == pytest.approx(after)


def test_the_next_labels_go_where_the_judges_verdict_is_least_certain() -> None:
    # judge yes: 10 unlabelled, nothing known of them; judge no: 90, 20 labelled clean
    flagged = Stratum(10, 0, 0, _open(10))
    cleared = Stratum(90, 20, 0, _open(70))
    assert allocate([(flagged, cleared)], 1) == [(1, 0)]
    assert allocate([(flagged, cleared)], 30)[0][0] == 10  # the stratum runs out


def test_across_cells_labels_go_where_they_narrow_most_in_proportion() -> None:
    thin = (Stratum(10, 0, 0, _open(10)), Stratum(90, 0, 0, _open(90)))
    known = (Stratum(10, 10, 5, ()), Stratum(90, 90, 9, ()))
    # the known cell has nothing left to label; the thin cell gets them all, never more
    # than it has
    assert sum(allocate([known, thin], 5)[1]) == 5
    assert sum(map(sum, allocate([known, thin], 500))) == 100
    # two cells alike but one has labels already: the unlabelled one goes first
    rare = (Stratum(20, 0, 0, _open(20)), Stratum(180, 0, 0, _open(180)))
    labelled = (Stratum(20, 10, 3, _open(10)), Stratum(180, 60, 1, _open(120)))
    (first, second) = allocate([labelled, rare], 10)
    assert sum(second) > sum(first)


def test_a_cell_counted_twice_gets_more_of_the_labels() -> None:
    def cell() -> tuple[Stratum, Stratum]:
        return Stratum(20, 4, 1, _open(16)), Stratum(180, 36, 1, _open(144))

    even = allocate([cell(), cell()], 40)
    assert sum(even[0]) == sum(even[1]) == 20
    gated = allocate([cell(), cell()], 40, [2.0, 1.0])
    assert sum(gated[0]) > sum(gated[1]) and sum(map(sum, gated)) == 40


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


def test_a_label_in_one_cell_narrows_another_only_as_far_as_their_judge_is_alike() -> None:
    cells = [
        pair_counts((Stratum(30, 5, 2, _open(25)), Stratum(170, 20, 1, _open(150)))),
        pair_counts((Stratum(60, 10, 6, _open(50)), Stratum(140, 20, 2, _open(120)))),
    ]
    apart = Information(cells)
    assert apart.sd_after(0, 1, 40)[1] == apart.sd()[1]
    alike = Information(cells, spread=(0.02, 0.02))
    assert alike.sd_after(0, 1, 40)[1] < alike.sd()[1]
    # cells far apart are each their own: the per-cell model's figures
    far = Information(cells, spread=(50.0, 50.0))
    assert far.sd() == pytest.approx(apart.sd(), rel=1e-4)
    # and learning from each other can only narrow
    assert all(alike.sd() < apart.sd())
