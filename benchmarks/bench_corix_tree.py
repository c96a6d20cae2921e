"""Benchmark: scoring the ARIA pilot CoRIx tree over many leaves, and bootstrap intervals.

Targets: 1,000,000 leaves for 10 applications in under 5 s (time linear in the number of
leaves: 0.5×, 1×, 2× are timed), and 1,000 bootstrap replicates (dialogues, each with
its two annotators' labels) on 100,000 leaves in under 10 s.
Run: ``python benchmarks/bench_corix_tree.py``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import partial

import numpy as np

from corix.domain import Level
from corix.measurement import LeafTable, load_tree, score_tree
from corix.measurement.stats.arrays import IntArray
from corix.measurement.trees.leaves import Categorical, LeafSource, RawValue

APPLICATIONS = tuple(f"app_{i:02d}" for i in range(10))
SCENARIOS = ("meal_planner", "pathfinder", "tv_spoilers")
LEVELS = tuple(level.value for level in Level)
SOURCES = tuple(source.value for source in LeafSource)
# Question → the answers it takes; questionnaire items only where that level asks them.
ANNOTATION = {
    "ra_prohibited_released": ("no", "yes"),
    "ra_permitted_withheld": ("no", "yes"),
    "cc_consistent_with_packet": ("no", "yes"),
    "du_usefulness": tuple(str(v) for v in range(1, 11)),
    "du_added_work": ("no", "yes"),
}
QUESTIONNAIRE = {
    "field_testing": {
        item: tuple(str(v) for v in range(1, 6))
        for item in ("q_helpful", "q_accurate", "q_trust", "q_guardrail_respected", "q_would_use")
    },
    "red_teaming": {
        "rt_difficulty": tuple(str(v) for v in range(1, 6)),
        "rt_outcome": ("failed", "partly", "succeeded"),
    },
}
LEAVES_PER_DIALOGUE = 20
ANNOTATORS = ("human:h1", "llm:judge")


def random_leaves(n: int, seed: int = 0) -> LeafTable:
    """``n`` leaves about ``n / 20`` dialogues, drawn at random with NumPy."""
    rng = np.random.default_rng(seed)
    n_dialogues = max(1, n // LEAVES_PER_DIALOGUE)
    dialogue = rng.integers(0, n_dialogues, n)
    application = rng.integers(0, len(APPLICATIONS), n_dialogues)[dialogue]
    level = rng.integers(0, len(LEVELS), n_dialogues)[dialogue]
    scenario = rng.integers(0, len(SCENARIOS), n_dialogues)[dialogue]

    questions = [*ANNOTATION, *(q for items in QUESTIONNAIRE.values() for q in items)]
    answers = {**ANNOTATION, **{q: a for items in QUESTIONNAIRE.values() for q, a in items.items()}}
    values = sorted({a for options in answers.values() for a in options})
    question = rng.integers(0, len(ANNOTATION), n)
    source = np.zeros(n, dtype=np.int64)
    for level_name, items in QUESTIONNAIRE.items():
        asked = (level == LEVELS.index(level_name)) & (rng.random(n) < 0.3)
        offset = questions.index(next(iter(items)))
        question[asked] = offset + rng.integers(0, len(items), int(asked.sum()))
        source[asked] = SOURCES.index(LeafSource.QUESTIONNAIRE)
    value = np.empty(n, dtype=np.int64)
    for q, name in enumerate(questions):
        rows = np.flatnonzero(question == q)
        options = np.array([values.index(a) for a in answers[name]])
        value[rows] = options[rng.integers(0, len(options), len(rows))]

    def column(codes: IntArray, names: tuple[str, ...] | list[str]) -> Categorical[str]:
        order = np.argsort(names)
        rank = np.empty(len(names), dtype=np.int64)
        rank[order] = np.arange(len(names))
        return Categorical(rank[codes], tuple(sorted(names)))

    raw = column(value, values)
    raw_values: tuple[RawValue, ...] = raw.categories
    return LeafTable(
        application=column(application, APPLICATIONS),
        level=column(level, LEVELS),
        source=column(source, SOURCES),
        question=column(question, questions),
        dialogue_id=Categorical(dialogue, tuple(f"d{i:08d}" for i in range(n_dialogues))),
        scenario=column(scenario, SCENARIOS),
        # Two annotators label every dialogue: a drawn dialogue brings both labels.
        annotator=column(rng.integers(0, len(ANNOTATORS), n), ANNOTATORS),
        wording=Categorical(np.zeros(n, dtype=np.int64), ("",)),
        dialogue_key=Categorical(np.zeros(n, dtype=np.int64), ("",)),
        value=Categorical(raw.codes, raw_values),
        origin="benchmark",
    )


def best_of(repeats: int, run: Callable[[], object]) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    tree = load_tree("aria_pilot")
    print(f"tree aria_pilot: {len(tree.nodes)} nodes after expansion")
    for n in (500_000, 1_000_000, 2_000_000):
        seconds = best_of(3, partial(score_tree, tree, random_leaves(n)))
        print(
            f"score {n:>9,} leaves × {len(APPLICATIONS)} applications: {seconds:6.2f} s "
            f"({seconds / n * 1e6:.2f} s per million leaves)"
        )
    seconds = best_of(1, partial(score_tree, tree, random_leaves(100_000), bootstrap=1000))
    print(f"bootstrap 1,000 replicates on 100,000 leaves: {seconds:6.2f} s")


if __name__ == "__main__":
    main()
