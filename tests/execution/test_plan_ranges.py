"""A plan's numbers have documented ranges, checked when the plan loads (so by preflight and
`corix run --check`), with the file, line and field: before, `repeats: 10**12` hung preflight
while it listed work items and `seed: 10**40` passed `--check`, then failed the run."""

from __future__ import annotations

from pathlib import Path

import pytest

from corix.domain.plan import MAX_REPEATS, MAX_SEED, MAX_SESSIONS, load_plan
from corix.errors import ConfigError

_PLAN = (
    "name: ranges\nseed: {seed}\napplications:\n  - {{name: a, spec: 'demo:guarded'}}\n"
    "scenarios: [tv_spoilers]\nlevels:\n  model_testing: {{{settings}}}\n"
)


@pytest.mark.parametrize(
    ("seed", "settings", "field", "line"),
    [
        (1, "repeats: 1000000000000", "levels.model_testing.repeats", 7),
        (10**40, "", "seed", 2),
        (-1, "", "seed", 2),
        (1, "sessions: 10000000000", "levels.model_testing.sessions", 7),
    ],
)
def test_a_number_out_of_range_names_its_field_and_line(
    tmp_path: Path, seed: int, settings: str, field: str, line: int
) -> None:
    path = tmp_path / "plan.yaml"
    path.write_text(_PLAN.format(seed=seed, settings=settings), encoding="utf-8")
    with pytest.raises(ConfigError) as refused:
        load_plan(path)
    assert f"plan.yaml:{line}" in str(refused.value)
    assert f"'{field}'" in str(refused.value)


def test_the_largest_numbers_in_range_load(tmp_path: Path) -> None:
    path = tmp_path / "plan.yaml"
    settings = f"repeats: {MAX_REPEATS}, sessions: {MAX_SESSIONS}"
    path.write_text(_PLAN.format(seed=MAX_SEED, settings=settings), encoding="utf-8")
    plan = load_plan(path)
    assert plan.seed == 2**63 - 1
    assert plan.levels["model_testing"].repeats == 10_000
