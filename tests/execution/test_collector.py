"""The garbage collector's setting during a run, and after it."""

from __future__ import annotations

import gc

import pytest

from corix.execution.collector import RUN_THRESHOLDS, collected_sparingly


def test_a_run_freezes_the_heap_it_starts_with_and_gives_the_setting_back() -> None:
    before = gc.get_threshold()
    with collected_sparingly():
        assert gc.get_threshold() == RUN_THRESHOLDS
        assert gc.get_freeze_count() > 0  # what existed before is no longer rescanned
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


def test_a_failing_run_gives_the_setting_back_as_well() -> None:
    before = gc.get_threshold()
    with pytest.raises(RuntimeError), collected_sparingly():
        raise RuntimeError("the run failed")
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


def test_cycles_made_during_a_run_are_still_collected() -> None:
    class Node:
        partner: object = None

    with collected_sparingly():
        first, second = Node(), Node()
        first.partner, second.partner = second, first
        del first, second
        assert gc.collect() >= 2
