"""Partial pooling of a judge's error over a harm's cells: narrower where cells agree,
apart where they do not, and cell by cell for one cell."""

from __future__ import annotations

import numpy as np

from corix.measurement.judges.corrected_rate import CellCounts, corrected_rate
from corix.measurement.judges.pooling import (
    POOLED_METHOD,
    cell_counts,
    corrected_rates,
    judge_spread,
    partial_draws,
)


def _cell(
    name: str, size: int, defects: int, caught: int, false_alarms: int, every: int
) -> tuple[dict[str, float], dict[str, float]]:
    """``size`` dialogues, the first ``defects`` defects of which the judge flags
    ``caught``, and ``false_alarms`` clean ones flagged; every ``every``-th is labelled."""
    judged: dict[str, float] = {}
    trusted: dict[str, float] = {}
    for i in range(size):
        defect = i < defects
        flagged = i < caught if defect else i < defects + false_alarms
        key = f"{name}{i}"
        judged[key] = float(flagged)
        if i % every == 0:
            trusted[key] = float(defect)
    return judged, trusted


def test_one_cell_is_corrected_cell_by_cell() -> None:
    judged, trusted = _cell("a", 200, 20, 16, 10, 2)
    (pooled,) = corrected_rates([{"c": "a"}], [judged], trusted, judge="llm", reference="human")
    alone = corrected_rate({"c": "a"}, judged, trusted, judge="llm", reference="human")
    assert pooled == alone and pooled.pooled_cells == 1


def test_cells_whose_judge_is_alike_narrow_each_other() -> None:
    # Sensitivity 0.85 everywhere; a quarter of each cell labelled.
    cells = [
        _cell("r", 1000, 20, 17, 90, 4),
        _cell("m", 1000, 100, 85, 90, 4),
        _cell("c", 1000, 200, 170, 80, 4),
    ]
    trusted = {k: v for _, t in cells for k, v in t.items()}
    groups = [{"c": name} for name in "rmc"]
    pooled = corrected_rates(groups, [j for j, _ in cells], trusted, judge="llm", reference="h")
    alone = [
        corrected_rate(g, j, trusted, judge="llm", reference="h")
        for g, (j, _) in zip(groups, cells, strict=True)
    ]
    assert all(r.method == POOLED_METHOD and r.pooled_cells == 3 for r in pooled)
    widths = {}
    for name, rates in (("pooled", pooled), ("alone", alone)):
        bounds = [(r.ci_low, r.ci_high) for r in rates]
        assert all(low is not None and high is not None for low, high in bounds)
        for (low, high), truth in zip(bounds, (0.02, 0.1, 0.2), strict=True):
            assert low is not None and high is not None and low <= truth <= high
        widths[name] = sum(high - low for low, high in bounds if low is not None and high)
    assert widths["pooled"] < 0.96 * widths["alone"]
    # The rare cell's 5 labelled defects are too few alone; pooled, it says it leans on the
    # others instead of that it cannot be corrected.
    assert alone[0].note is not None and "too thin to correct" in alone[0].note
    assert pooled[0].note is not None and "leans on the other 2 cells" in pooled[0].note
    assert pooled[2].note is None


def test_a_cell_whose_judge_differs_is_not_corrected_with_the_others() -> None:
    # Two cells with a judge that finds 95% of defects, one where it finds half: that
    # cell's rate stays near what its own labels say (0.2), above its raw rate (0.14), and
    # far from the 0.10 the others' accuracies would give it.
    cells = [
        _cell("a", 600, 120, 114, 24, 3),
        _cell("b", 600, 120, 114, 24, 3),
        _cell("c", 600, 120, 60, 24, 3),
    ]
    trusted = {k: v for _, t in cells for k, v in t.items()}
    groups = [{"c": name} for name in "abc"]
    pooled = corrected_rates(groups, [j for j, _ in cells], trusted, judge="llm", reference="h")
    assert pooled[2].ci_low is not None and pooled[2].ci_high is not None
    assert pooled[2].ci_low <= 0.2 <= pooled[2].ci_high
    assert pooled[2].raw_rate is not None and pooled[2].ci_low > pooled[2].raw_rate


def test_the_draws_are_reproducible_per_seed_and_one_column_a_cell() -> None:
    counts = [CellCounts(5, 1, 2, 40, 30, 300), CellCounts(9, 2, 1, 30, 60, 250)]
    first = partial_draws(counts, 400, [3, 4])
    assert first.shape == (400, 2)
    np.testing.assert_array_equal(first, partial_draws(counts, 400, [3, 4]))
    assert cell_counts({"a": 1.0, "b": 0.0, "c": 1.0}, {"a": 0.0}) == CellCounts(0, 0, 1, 0, 1, 1)


def _labelled(size: int, defects: int, caught: int, false_alarms: int) -> CellCounts:
    """A cell labelled throughout: the judge flags ``caught`` of its ``defects`` and
    ``false_alarms`` of the rest."""
    return CellCounts(
        tp=caught,
        fn=defects - caught,
        fp=false_alarms,
        tn=size - defects - false_alarms,
        yes=0,
        no=0,
    )


def test_the_judges_spread_over_cells_is_what_the_labels_show() -> None:
    # Four cells, 400 defects each: sensitivities 0.85 everywhere, then 0.6, 0.7, 0.8, 0.9
    # (their standard deviation 0.11 over the four, 0.13 as a sample's); specificity 0.95.
    alike = [_labelled(4000, 400, 340, 180) for _ in range(4)]
    differ = [_labelled(4000, 400, caught, 180) for caught in (240, 280, 320, 360)]
    se_alike, sp_alike = judge_spread(alike, 1)
    se_differ, sp_differ = judge_spread(differ, 1)
    assert se_alike < 0.04 and sp_alike < 0.04
    assert 0.08 < se_differ < 0.2 and sp_differ < 0.04
