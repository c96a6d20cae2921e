"""Adaptive repeats ask the same passes whatever order the sessions finish in.

The noisy mock judge answers from the request alone, so the same seed asks the same
repeats only if the stopping rule does not depend on completion order: here the calls
finish in a different, random order in each annotation, at different concurrency.
"""

from __future__ import annotations

import asyncio
import math
import random
from collections import Counter

import pytest
from annotator_support import Dialogue, store_run

from corix.assessment.annotation_run import AnnotateOptions, AnnotationSummary, annotate_run_async
from corix.assessment.stability import JudgeNoise
from corix.llm import ChatRequest, EndpointConfig, LLMClient, MockModel, ScriptedTransport
from corix.llm.transport import RawCompletion
from corix.storage import Database, load_consensus, load_passes

JUDGE = EndpointConfig(name="judge", transport="mock", model="corix-mock")
HARMS = ("groundedness", "ip_leakage")
SESSIONS = 18


class ShuffledJudge(ScriptedTransport):
    """The noisy mock judge, each reply held back a random moment: calls finish out of order."""

    def __init__(self, order_seed: int) -> None:
        super().__init__(MockModel(judge_noise=0.1))
        self._rng = random.Random(order_seed)

    async def send(
        self, request: ChatRequest, endpoint: EndpointConfig, timeout: float
    ) -> RawCompletion:
        await asyncio.sleep(self._rng.random() / 500)
        return await super().send(request, endpoint, timeout)


def _dialogues() -> list[Dialogue]:
    return [
        Dialogue(
            scenario="tv_spoilers",
            turns=[(f"Who wins season {i}?", f"Season {i} ends with a twist I won't spoil.")],
            id=f"session-{i:02d}",
        )
        for i in range(SESSIONS)
    ]


async def _annotate(db: Database, concurrency: int, order_seed: int) -> AnnotationSummary:
    options = AnnotateOptions(
        repeats=5, adaptive=True, concurrency=concurrency, harms=HARMS, temperature=1.0, seed=7
    )
    async with LLMClient(JUDGE, transport=ShuffledJudge(order_seed)) as client:
        return await annotate_run_async(db, "run-test", "llm-harms", options=options, client=client)


def _stored(db: Database) -> tuple[Counter[tuple[object, ...]], list[tuple[object, ...]]]:
    passes = Counter(
        (p.session_id, p.category, p.repeat_no, tuple(p.answers))
        for p in load_passes(db, run_id="run-test")
    )
    labels = sorted(
        (c.session_id, c.category, c.question_id, c.value, c.n_runs)
        for c in load_consensus(db, run_id="run-test")
    )
    return passes, labels


@pytest.mark.timeout(60)
async def test_the_same_seed_asks_the_same_repeats_at_any_concurrency_and_order(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    results = []
    for concurrency, order_seed in ((2, 0), (18, 1)):
        db = Database(f"sqlite:///{tmp_path_factory.mktemp('adaptive') / 'corix.db'}")
        store_run(db, _dialogues())
        summary = await _annotate(db, concurrency, order_seed)
        results.append((summary, _stored(db)))
        db.dispose()
    (first, (passes, labels)), *others = results
    saved = sum(counts.repeats_saved for counts in first.by_target.values())
    assert 0 < saved < SESSIONS * len(HARMS) * 3  # some items stopped early, not all
    assert len(labels) == SESSIONS * len(HARMS)
    for summary, stored in others:
        assert stored == (passes, labels)
        assert summary.model_calls == first.model_calls
        assert summary.by_target == first.by_target
        assert summary.judge_noise == first.judge_noise


async def test_the_noise_is_the_bound_from_the_pilots_first_two_repeats(
    sqlite_db: Database,
) -> None:
    store_run(sqlite_db, _dialogues())
    summary = await _annotate(sqlite_db, 8, 0)
    # Fewer sessions than a pilot holds: every session's first two repeats are the pilot.
    firsts: dict[tuple[str, str], list[object]] = {}
    for stored in sorted(load_passes(sqlite_db, run_id="run-test"), key=lambda p: p.repeat_no):
        if stored.repeat_no < 2:
            firsts.setdefault((stored.session_id, stored.category), []).append(
                stored.answers[0].value
            )
    scale_sizes = {"harm:groundedness": 5, "harm:ip_leakage": 8}
    expected = JudgeNoise(assumed=0.4)
    for (_session, category), (first, second) in sorted(firsts.items()):
        expected.add_pair(first, second, scale_sizes[category])  # type: ignore[arg-type]
    assert expected.pairs == SESSIONS * len(HARMS) >= expected.min_pairs
    assert expected.differing > 0
    assert summary.judge_noise == pytest.approx(expected.bound())
    assert not math.isclose(expected.bound(), 0.4)  # measured, not the assumption


async def test_a_resumed_annotation_asks_what_one_uninterrupted_asks(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    whole = Database(f"sqlite:///{tmp_path_factory.mktemp('whole') / 'corix.db'}")
    resumed = Database(f"sqlite:///{tmp_path_factory.mktemp('resumed') / 'corix.db'}")
    for db in (whole, resumed):
        store_run(db, _dialogues())
    first = await _annotate(whole, 8, 0)
    # Stopped after every item's first two repeats (the pilot's and more), then resumed.
    early = AnnotateOptions(repeats=2, harms=HARMS, temperature=1.0, seed=7, concurrency=8)
    async with LLMClient(JUDGE, transport=ShuffledJudge(3)) as client:
        await annotate_run_async(resumed, "run-test", "llm-harms", options=early, client=client)
    again = await _annotate(resumed, 3, 4)
    assert again.judge_noise == first.judge_noise
    assert _stored(resumed) == _stored(whole)
    for db in (whole, resumed):
        db.dispose()
