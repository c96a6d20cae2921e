"""Coverage of corix's intervals in the designs real evaluations use, by simulation.

Every cell simulates many evaluations whose true value is known, computes the interval
exactly as corix does, and counts how often it holds the truth (nominal 95%). Beside
coverage stands the mean width, and where today's (earlier) method is cheap to rerun,
its coverage and width, so a method cannot pass by being uselessly wide.

    python benchmarks/coverage_study.py                 # 2,000 simulations a cell
    python benchmarks/coverage_study.py --simulations 300 --no-write

The full run writes its table into docs/measurement.md between the coverage-study
markers. ``tests/measurement/test_coverage_study.py`` runs a fast subset.
"""

from __future__ import annotations

import argparse
import math
import re
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy import stats
from scipy.special import expit, logit

from corix.measurement import LeafTable, score_tree
from corix.measurement.defect_rates import DialogueLabels, rate_interval
from corix.measurement.hit_at_k import hit_at_k, hit_interval
from corix.measurement.judges.corrected_rate import corrected_rate
from corix.measurement.stats.bootstrap import cluster_resamples, percentile_interval
from corix.measurement.stats.sample_size import n_for_assured_width, n_for_width
from corix.measurement.stats.wilson import wilson_bounds, wilson_cc_bounds
from corix.measurement.stopping.rules import UNDECIDED, StoppingRule, cell_progress
from corix.measurement.stopping.width_rule import width_rule_coverage
from corix.measurement.trees.engine import PreparedLeaves, TreeEvaluator
from corix.measurement.trees.loading import parse_tree

CONFIDENCE = 0.95
RATE_RESAMPLES = 500
PLAN_RESAMPLES = 1000  # the specification's default, which plan sizing assumes
TREE_REPLICATES = 999
DOCS = Path(__file__).resolve().parents[1] / "docs" / "measurement.md"
START, END = "<!-- coverage-study:start -->", "<!-- coverage-study:end -->"


@dataclass(frozen=True)
class Cell:
    """One design's result: coverage of the truth, mean width, and today's when known."""

    design: str
    setting: str
    coverage: float
    width: float
    simulations: int  # 0: computed exactly
    today: tuple[float, float] | None = None
    plain: tuple[float, float] | None = None  # percentile over the same stages, trees only

    @property
    def mc_error(self) -> float:
        """1.96 Monte Carlo standard errors of the coverage (0 when exact)."""
        if not self.simulations:
            return 0.0
        return 1.96 * math.sqrt(max(self.coverage * (1 - self.coverage), 0.0025) / self.simulations)

    def row(self) -> str:
        error = "exact" if not self.simulations else f"±{self.mc_error:.3f}"
        today, plain = (
            "—" if pair is None else f"{pair[0]:.3f} / {pair[1]:.3f}"
            for pair in (self.today, self.plain)
        )
        return (
            f"| {self.design} | {self.setting} | **{self.coverage:.3f}** {error} | "
            f"{self.width:.3f} | {today} | {plain} |"
        )


def _covered(lows: np.ndarray, highs: np.ndarray, truth: float | np.ndarray) -> float:
    return float(np.mean((lows <= truth) & (truth <= highs)))


# --- Defect rates -----------------------------------------------------------------------


def single_label(n: int, p: float) -> Cell:
    """One exact 0/1 label per dialogue: coverage by enumerating the binomial (exact)."""
    x = np.arange(n + 1)
    weight = stats.binom.pmf(x, n, p)

    def exact(bounds: Callable[[float, float, float], tuple[float, float]]) -> tuple[float, float]:
        ends = np.array([bounds(k / n, n, CONFIDENCE) for k in x])
        hit = (ends[:, 0] <= p) & (p <= ends[:, 1])
        return float(weight @ hit), float(weight @ (ends[:, 1] - ends[:, 0]))

    coverage, width = exact(wilson_cc_bounds)
    return Cell("one label per dialogue", f"n={n}, p={p}", coverage, width, 0, exact(wilson_bounds))


def _rate_cell(
    design: str,
    setting: str,
    simulations: int,
    seed: int,
    truth: float,
    draw: Callable[[np.random.Generator], DialogueLabels],
) -> Cell:
    rng = np.random.default_rng(seed)
    lows, highs = np.empty(simulations), np.empty(simulations)
    for s in range(simulations):
        lows[s], highs[s], _ = rate_interval(
            draw(rng), confidence=CONFIDENCE, resamples=RATE_RESAMPLES, seed=s
        )
    return Cell(
        design, setting, _covered(lows, highs, truth), float(np.mean(highs - lows)), simulations
    )


def annotators(p: float, combine: str, simulations: int, n: int = 30, eps: float = 0.15) -> Cell:
    """Three annotators who each flip a true label with probability ``eps``. ``keep``
    covers the expected annotator mean, ``settle`` the expected majority verdict."""
    flip_majority = 3 * eps**2 * (1 - eps) + eps**3
    keys = [f"d{i:03d}" for i in range(n)]

    def draw(rng: np.random.Generator) -> DialogueLabels:
        truth = rng.random(n) < p
        votes = (truth[:, None] ^ (rng.random((n, 3)) < eps)).astype(float)
        labels = [(key, f"a{j}", votes[i, j]) for i, key in enumerate(keys) for j in range(3)]
        if combine == "keep":
            return DialogueLabels(keys, list(votes.mean(axis=1)), labels)
        settled = list((votes.sum(axis=1) >= 2).astype(float))
        return DialogueLabels(keys, settled, labels)

    if combine == "keep":
        target = p * (1 - eps) + (1 - p) * eps
    else:
        target = p * (1 - flip_majority) + (1 - p) * flip_majority
    seed = [int(p * 100), len(combine)]
    return _rate_cell(
        f"3 annotators, 15% flips, {combine}", f"n={n}, p={p}", simulations, seed, target, draw
    )


def _marginal(p0: float, sd: float) -> float:
    """E[expit(logit p0 + u)], u ~ N(0, sd²), by Gauss–Hermite quadrature."""
    nodes, weights = np.polynomial.hermite_e.hermegauss(80)
    return float(weights @ expit(logit(p0) + sd * nodes) / math.sqrt(2 * math.pi))


def judge(prevalence: float, human: int, simulations: int, n: int = 400) -> Cell:
    """An LLM judge (sensitivity 0.80, specificity 0.95) rates ``n`` dialogues; people
    label ``human`` of them."""
    rng = np.random.default_rng([int(prevalence * 100), human])
    keys = [f"d{i:04d}" for i in range(n)]
    lows, highs = np.empty(simulations), np.empty(simulations)
    for s in range(simulations):
        truth = rng.random(n) < prevalence
        verdict = np.where(truth, rng.random(n) < 0.80, rng.random(n) > 0.95)
        calibrated = rng.choice(n, human, replace=False)
        result = corrected_rate(
            {"cell": "judge"},
            dict(zip(keys, verdict.astype(float), strict=True)),
            {keys[i]: float(truth[i]) for i in calibrated},
            judge="llm",
            reference="human",
            resamples=1000,
            seed=s,
        )
        lows[s] = np.nan if result.ci_low is None else result.ci_low
        highs[s] = np.nan if result.ci_high is None else result.ci_high
    return Cell(
        "judge-corrected rate",
        f"prevalence {prevalence}, {human} human labels",
        _covered(lows, highs, prevalence),  # a missing interval counts as a miss
        float(np.nanmean(highs - lows)),
        simulations,
    )


# --- CoRIx trees ------------------------------------------------------------------------

NODE = """
name: node
questions:
  harm: {kind: yes_no, yes_means: risk}
nodes:
  root: {question: harm}
"""

MAX = """
name: worst_level
questions:
  harm: {kind: yes_no, yes_means: risk}
nodes:
  root: {summarizer: max, children: [model, red, field]}
  model: {summarizer: mean, where: {level: model_testing}, children: [{question: harm}]}
  red: {summarizer: mean, where: {level: red_teaming}, children: [{question: harm}]}
  field: {summarizer: mean, where: {level: field_testing}, children: [{question: harm}]}
"""
LEVELS = ("model_testing", "red_teaming", "field_testing")


def _leaves(
    rng: np.random.Generator, simulations: int, rates: tuple[float, ...], k: int, m: int, sd: float
) -> LeafTable:
    """One application per simulation; per level ``k`` testers × ``m`` dialogues, each
    dialogue one yes/no label."""
    return _cluster_leaves(rng, simulations, rates, [m] * k, sd, testers=m > 1)


def _cluster_leaves(
    rng: np.random.Generator,
    simulations: int,
    rates: tuple[float, ...],
    sizes: list[int],
    sd: float,
    *,
    testers: bool = True,
) -> LeafTable:
    """One application per simulation; per level one tester per entry of ``sizes`` with
    that many dialogues, each one yes/no label; a tester shifts the log-odds by N(0, sd²)."""
    columns: dict[str, list[np.ndarray]] = {
        c: [] for c in ("app", "level", "dialogue", "tester", "yes")
    }
    per_level = sum(sizes)
    owner = np.repeat(np.arange(len(sizes)), sizes)
    app = np.repeat(np.arange(simulations), per_level)
    for index, rate in enumerate(rates):
        shift = rng.normal(0, sd, (simulations, len(sizes)))[:, owner].ravel()
        yes = rng.random(simulations * per_level) < expit(logit(rate) + shift)
        local = np.tile(np.arange(per_level), simulations)
        columns["app"].append(app)
        columns["level"].append(np.full(len(app), LEVELS[index]))
        columns["dialogue"].append(np.char.add(f"{index}-", local.astype(str)))
        columns["tester"].append(np.char.add(f"{index}-", np.tile(owner, simulations).astype(str)))
        columns["yes"].append(yes)
    joined = {name: np.concatenate(parts) for name, parts in columns.items()}
    return LeafTable.from_columns(
        application=np.char.add("sim", joined["app"].astype(str)),
        level=joined["level"],
        source=np.full(len(joined["yes"]), "annotation"),
        question=np.full(len(joined["yes"]), "harm"),
        dialogue_id=joined["dialogue"],
        tester=joined["tester"] if testers else None,
        value=np.where(joined["yes"], "yes", "no"),
    )


def _roots(tree: str, leaves: LeafTable) -> tuple[np.ndarray, np.ndarray]:
    results = score_tree(parse_tree(tree), leaves, bootstrap=TREE_REPLICATES, seed=1)
    lows = np.array([root.ci_low for root in results.values()], dtype=float)
    highs = np.array([root.ci_high for root in results.values()], dtype=float)
    return lows, highs


def _plain_percentile_roots(
    tree: str, leaves: LeafTable, *, testers: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """The root's plain percentile interval: over dialogues alone (today's, before testers
    and simultaneous intervals), or over testers then dialogues (the same stages as
    corix now draws, without the expansion or the simultaneous intervals)."""
    prepared = PreparedLeaves(parse_tree(tree), leaves)
    applications = leaves.application.categories
    evaluator = TreeEvaluator(prepared, prepared.application, len(applications))
    strata = [applications[int(a)] for a in prepared.dialogue_application]
    chunks = []
    draws = cluster_resamples(
        prepared.dialogue_keys,
        TREE_REPLICATES,
        1,
        strata=strata,
        testers=prepared.dialogue_testers if testers else None,
    )
    for resample in draws:
        root = evaluator.evaluate(resample)[-1]
        assert root is not None  # the root is numeric
        chunks.append(root)
    return percentile_interval(np.concatenate(chunks, axis=1), CONFIDENCE)


def _summary(bounds: tuple[np.ndarray, np.ndarray], truth: float) -> tuple[float, float]:
    lows, highs = bounds
    return _covered(lows, highs, truth), float(np.mean(highs - lows))


def tree_max(rates: tuple[float, ...], k: int, m: int, sd: float, simulations: int) -> Cell:
    """``max`` over three levels (how the shipped dimensions are built)."""
    seed = [int(100 * r) for r in rates] + [k, m]
    leaves = _leaves(np.random.default_rng(seed), simulations, rates, k, m, sd)
    truth = 10 * max(_marginal(r, sd) for r in rates)
    lows, highs = _roots(MAX, leaves)
    levels = "equal" if len(set(rates)) == 1 else "unequal"
    design = f"max over three {levels} levels ({', '.join(f'{r:g}' for r in rates)})"
    setting = f"{k}×{m} per level, SD {sd}" if m > 1 else f"{k} dialogues per level"
    return Cell(
        design,
        setting,
        _covered(lows, highs, truth),
        float(np.mean(highs - lows)),
        simulations,
        _summary(_plain_percentile_roots(MAX, leaves), truth),
        _summary(_plain_percentile_roots(MAX, leaves, testers=m > 1), truth),
    )


# --- Clusters without double counting, planned widths, no evidence, max bias (issue 34) ---

CLUSTERS_START, CLUSTERS_END = "<!-- cluster-study:start -->", "<!-- cluster-study:end -->"
COVERS = 0.93  # "covers": at or above this; a width ratio is to the narrowest such method
UNBALANCED = [int(m) for m in np.random.default_rng(34).integers(1, 13, 20)]  # 1–12 each


@dataclass(frozen=True)
class ClusterCell:
    """One design: corix's interval and the alternatives on the same simulated data, each
    as (coverage, mean width); ``bias``: the published and the bias-corrected point
    value's mean error (``max`` nodes)."""

    design: str
    setting: str
    simulations: int
    corix: tuple[float, float]
    others: dict[str, tuple[float, float]]
    bias: tuple[float, float] | None = None

    @property
    def mc_error(self) -> float:
        """1.96 Monte Carlo standard errors of corix's coverage."""
        coverage = self.corix[0]
        return 1.96 * math.sqrt(max(coverage * (1 - coverage), 0.0025) / self.simulations)

    @property
    def ratio(self) -> float | None:
        """corix's width over the narrowest method's that covers (None: none covers)."""
        covering = [w for c, w in (self.corix, *self.others.values()) if c >= COVERS]
        return self.corix[1] / min(covering) if covering else None

    def row(self, simulations: int | None = None) -> str:
        """The table row; a cell measured with other than ``simulations`` says so."""
        coverage, width = self.corix
        runs = "" if simulations in (None, self.simulations) else f" ({self.simulations:,} runs)"
        others = "; ".join(f"{name} {c:.3f} / {w:.3f}" for name, (c, w) in self.others.items())
        ratio = "—" if self.ratio is None else f"{self.ratio:.2f}"
        bias = "—" if self.bias is None else f"{self.bias[0]:+.2f} / {self.bias[1]:+.2f}"
        return (
            f"| {self.design} | {self.setting} | **{coverage:.3f}** ±{self.mc_error:.3f}{runs} | "
            f"{width:.3f} | {ratio} | {others or '—'} | {bias} |"
        )


def _old_two_stage_variance(
    values: np.ndarray, owner: np.ndarray, resamples: int, rng: np.random.Generator
) -> float:
    """The bootstrap corix used before issue 34: testers with replacement, then each drawn
    tester's dialogues with replacement within it (within-tester variance counted twice)."""
    k = int(owner.max()) + 1
    sizes = np.bincount(owner, minlength=k)
    means = np.bincount(owner, weights=values, minlength=k) / sizes
    drawn = rng.multinomial(k, np.full(k, 1 / k), resamples)  # resamples × testers
    draws = drawn * sizes
    defects = rng.binomial(draws, means)
    return float(np.var(defects.sum(axis=1) / draws.sum(axis=1), ddof=1))


def rate_over_testers(sizes: list[int], sd: float, p0: float, simulations: int) -> ClusterCell:
    """A defect rate over testers of the given sizes: corix's interval, the interval that
    ignores testers, and the two-stage bootstrap corix used before (no CR1 factor)."""
    n = sum(sizes)
    owner = np.repeat(np.arange(len(sizes)), sizes)
    keys = [f"d{i:03d}" for i in range(n)]
    testers = [f"t{o:02d}" for o in owner]
    truth = _marginal(p0, sd)
    rng = np.random.default_rng([len(sizes), n, int(sd * 10), int(p0 * 100)])
    ends = {name: (np.empty(simulations), np.empty(simulations)) for name in ("corix", "i", "b")}
    for s in range(simulations):
        shift = rng.normal(0, sd, len(sizes))[owner]
        values = (rng.random(n) < expit(logit(p0) + shift)).astype(float)
        labels = [(key, "judge", v) for key, v in zip(keys, values, strict=True)]
        data = DialogueLabels(keys, list(values), labels, testers=testers)
        ends["corix"][0][s], ends["corix"][1][s], _ = rate_interval(
            data, confidence=CONFIDENCE, resamples=RATE_RESAMPLES, seed=s
        )
        rate = float(values.mean())
        ends["i"][0][s], ends["i"][1][s] = wilson_cc_bounds(rate, n, CONFIDENCE)
        variance = _old_two_stage_variance(values, owner, RATE_RESAMPLES, rng)
        effective = n if variance <= 0 or rate in (0.0, 1.0) else rate * (1 - rate) / variance
        ends["b"][0][s], ends["b"][1][s] = wilson_cc_bounds(rate, min(effective, n), CONFIDENCE)
    found = {name: _summary(pair, truth) for name, pair in ends.items()}
    return ClusterCell(
        "defect rate, testers",
        _cluster_setting(sizes, sd, p0),
        simulations,
        found["corix"],
        {"ignoring testers": found["i"], "before (testers → dialogues)": found["b"]},
    )


def _cluster_setting(sizes: list[int], sd: float, p0: float) -> str:
    shape = (
        f"{len(sizes)}×{sizes[0]}"
        if len(set(sizes)) == 1
        else f"{len(sizes)} testers, {min(sizes)}–{max(sizes)} each"
    )
    return f"{shape}, SD {sd:g}, rate {p0:g}"


def tree_over_testers(sizes: list[int], sd: float, p0: float, simulations: int) -> ClusterCell:
    """A CoRIx question node (0–10) over testers of the given sizes: corix's interval, the
    plain percentile over the same draws (testers), and the percentile over dialogues."""
    rng = np.random.default_rng([len(sizes), sum(sizes), int(sd * 10), int(p0 * 100), 1])
    leaves = _cluster_leaves(rng, simulations, (p0,), sizes, sd)
    truth = 10 * _marginal(p0, sd)
    lows, highs = _roots(NODE, leaves)
    over_testers = _plain_percentile_roots(NODE, leaves, testers=True)
    over_dialogues = _plain_percentile_roots(NODE, leaves)
    return ClusterCell(
        "CoRIx node, testers",
        _cluster_setting(sizes, sd, p0),
        simulations,
        _summary((lows, highs), truth),
        {
            "plain percentile over testers": _summary(over_testers, truth),
            "percentile over dialogues": _summary(over_dialogues, truth),
        },
    )


def max_bias(rates: tuple[float, ...], k: int, m: int, sd: float, simulations: int) -> ClusterCell:
    """``max`` over three levels: coverage, and the mean error of the published value and
    of the bias-corrected value beside it (0–10 scale)."""
    seed = [int(1000 * r) for r in rates] + [k, m, 34]
    leaves = _leaves(np.random.default_rng(seed), simulations, rates, k, m, sd)
    truth = 10 * max(_marginal(r, sd) for r in rates)
    roots = score_tree(parse_tree(MAX), leaves, bootstrap=TREE_REPLICATES, seed=1)
    lows = np.array([root.ci_low for root in roots.values()], dtype=float)
    highs = np.array([root.ci_high for root in roots.values()], dtype=float)
    values = np.array([root.numeric_value for root in roots.values()], dtype=float)
    corrected = np.array([root.bias_corrected for root in roots.values()], dtype=float)
    plain = _plain_percentile_roots(MAX, leaves, testers=m > 1)
    setting = f"{k}×{m} per level, SD {sd:g}" if m > 1 else f"{k} dialogues per level"
    return ClusterCell(
        f"max over three levels ({', '.join(f'{r:g}' for r in rates)})",
        setting,
        simulations,
        _summary((lows, highs), truth),
        {"plain percentile of the max": _summary(plain, truth)},
        (float(np.mean(values - truth)), float(np.mean(corrected - truth))),
    )


def no_defect_seen(k: int, m: int, sd: float, p0: float, simulations: int) -> ClusterCell:
    """A node over few testers and a rare defect, where most simulations see none: corix
    (a node at 0 reaches corrected Wilson's bound for 0 of n) against the percentile
    interval, which collapses to [0, 0]; the share of such collapses is in the setting."""
    rng = np.random.default_rng([k, m, int(sd * 10), int(p0 * 1000), 5])
    leaves = _leaves(rng, simulations, (p0,), k, m, sd)
    truth = 10 * _marginal(p0, sd)
    lows, highs = _roots(NODE, leaves)
    plain_low, plain_high = _plain_percentile_roots(NODE, leaves, testers=m > 1)
    collapsed = float(np.mean(plain_high - plain_low == 0))
    return ClusterCell(
        "CoRIx node, no defect seen",
        f"{k}×{m}, SD {sd:g}, rate {p0:g} ({collapsed:.0%} of percentile intervals [0, 0])",
        simulations,
        _summary((lows, highs), truth),
        {"plain percentile (before)": _summary((plain_low, plain_high), truth)},
    )


@dataclass(frozen=True)
class PlanCell:
    """A planned n run many times: the share of runs whose reported interval met the
    width (against the promised assurance) and the interval's coverage."""

    setting: str
    n: int
    met: float
    width: float
    coverage: float
    simulations: int

    def row(self) -> str:
        error = 1.96 * math.sqrt(max(self.met * (1 - self.met), 0.0025) / self.simulations)
        return (
            f"| {self.setting} | {self.n} | **{self.met:.3f}** ±{error:.3f} | "
            f"{self.width:.3f} | {self.coverage:.3f} |"
        )


def planned_width(
    rate: float, width: float, m: int, icc: float, simulations: int, assurance: float = 0.8
) -> PlanCell:
    """``corix plan size --width W --rate P [--per-tester M --icc R]``, then that many
    dialogues simulated (testers' own rates Beta with that ICC) and measured as corix does."""
    n = n_for_assured_width(rate, width, CONFIDENCE, assurance=assurance, per_tester=m, icc=icc)
    testers = n // m
    keys = [f"d{i:04d}" for i in range(n)]
    names = [f"t{i // m:03d}" for i in range(n)] if m > 1 else None
    rng = np.random.default_rng([int(rate * 100), m, int(icc * 100), 34])
    widths, hits = np.empty(simulations), np.empty(simulations, dtype=bool)
    for s in range(simulations):
        own = np.full(testers, rate)
        if icc > 0:
            scale = (1 - icc) / icc
            own = rng.beta(rate * scale, (1 - rate) * scale, testers)
        values = (rng.random(n) < np.repeat(own, m)).astype(float)
        labels = [(key, "judge", v) for key, v in zip(keys, values, strict=True)]
        data = DialogueLabels(keys, list(values), labels, testers=names)
        low, high, _ = rate_interval(data, confidence=CONFIDENCE, resamples=RATE_RESAMPLES, seed=s)
        widths[s], hits[s] = high - low, low <= rate <= high
    design = "one dialogue per tester" if m == 1 else f"{m} per tester, ICC {icc:g}"
    return PlanCell(
        f"rate {rate:g}, width {width:g}, {design}",
        n,
        float(np.mean(widths <= width)),
        float(np.mean(widths)),
        float(np.mean(hits)),
        simulations,
    )


def cluster_cells() -> Iterator[Callable[[int], ClusterCell | PlanCell]]:
    """Issue 34's cells, as functions of the number of simulations: planned widths, rates
    and nodes over testers (balanced, as in the table above, and unbalanced), no defect
    seen, ``max`` bias."""
    for rate, m, icc in ((0.5, 1, 0.0), (0.2, 1, 0.0), (0.05, 1, 0.0), (0.5, 5, 0.05)):
        yield lambda n, r=rate, m=m, i=icc: planned_width(r, 0.1, m, i, n)
    for rate, icc in ((0.2, 0.1), (0.2, 0.0)):
        yield lambda n, r=rate, i=icc: planned_width(r, 0.1, 5, i, n)
    for k, m in ((6, 5), (10, 3), (12, 5)):
        for sd in (0.5, 1.0):
            yield lambda n, k=k, m=m, sd=sd: rate_over_testers([m] * k, sd, 0.2, n)
            yield lambda n, k=k, m=m, sd=sd: tree_over_testers([m] * k, sd, 0.3, n)
    for k, m in ((6, 5), (10, 3)):  # rare risk: the plain percentile falls short here
        yield lambda n, k=k, m=m: tree_over_testers([m] * k, 1.0, 0.1, n)
    for sd in (0.0, 1.5):
        for p0 in (0.03, 0.2, 0.5):
            yield lambda n, sd=sd, p=p0: rate_over_testers(UNBALANCED, sd, p, n)
            yield lambda n, sd=sd, p=p0: tree_over_testers(UNBALANCED, sd, p, n)
    for sd in (0.0, 1.0):
        yield lambda n, sd=sd: no_defect_seen(3, 5, sd, 0.03, n)
    for rates in ((0.3, 0.3, 0.3), (0.28, 0.3, 0.32), (0.2, 0.3, 0.4)):
        yield lambda n, r=rates: max_bias(r, 30, 1, 0.0, n)
        yield lambda n, r=rates: max_bias(r, 6, 5, 1.0, n)


CONFIRM = 4  # a cell under 0.93 is run again with 4× the simulations


def measured_cluster_cell(
    make: Callable[[int], ClusterCell | PlanCell], simulations: int
) -> ClusterCell | PlanCell:
    """One cell; an interval cell whose coverage falls under 0.93 is measured again with
    ``CONFIRM`` × the simulations, which the row then reports: at 500 simulations a
    coverage of 0.95 reads under 0.93 about one time in twenty (±0.019), so a shortfall
    is confirmed or refuted at ±0.010 before it is read as one."""
    found = make(simulations)
    if isinstance(found, ClusterCell) and found.corix[0] < COVERS:
        found = make(CONFIRM * simulations)
    return found


def cluster_table(results: list[ClusterCell | PlanCell], simulations: int, seconds: float) -> str:
    plans = [cell for cell in results if isinstance(cell, PlanCell)]
    intervals = [cell for cell in results if isinstance(cell, ClusterCell)]
    return "\n".join(
        [
            CLUSTERS_START,
            f"{simulations:,} simulated evaluations a cell; ± is 1.96 Monte Carlo standard "
            f"errors; an interval cell whose coverage falls under {COVERS} is run again with "
            f"{CONFIRM * simulations:,} simulations, which its row reports. "
            f"`python benchmarks/coverage_study.py --part clusters` "
            f"({seconds / 60:.0f} min on a shared 2-core machine) rewrites these tables.",
            "",
            "**Planned widths.** `corix plan size --width 0.1 --rate P [--per-tester 5 --icc R]` "
            "(assurance 0.8), then that many dialogues measured as `corix defects` does:",
            "",
            "| plan | planned n | runs with width ≤ 0.1 (promised ≥ 0.8) | mean width | coverage |",
            "|---|---|---|---|---|",
            *(cell.row() for cell in plans),
            "",
            "**Intervals over testers, no defect seen, `max` bias.** *÷ narrowest* is corix's "
            f"width over the narrowest method in the row that covers (≥ {COVERS}); *bias* is "
            "the mean error of the published value / of the bias-corrected value (0–10).",
            "",
            "| design | setting | coverage | mean width | ÷ narrowest | other methods: "
            "coverage / width | bias: published / corrected |",
            "|---|---|---|---|---|---|---|",
            *(cell.row(simulations) for cell in intervals),
            CLUSTERS_END,
        ]
    )


def cells(simulations: int) -> Iterator[Callable[[], Cell]]:
    """Every cell of the study, as thunks (so a caller can time and print each)."""
    for n in (10, 30, 60):
        for p in (0.05, 0.2, 0.5):
            yield lambda n=n, p=p: single_label(n, p)
    for combine in ("keep", "settle"):
        for p in (0.05, 0.2, 0.5):
            yield lambda c=combine, p=p: annotators(p, c, simulations)
    # Rates, nodes and maxima over testers: the cluster table below (issue 34).
    for rates in ((0.3, 0.3, 0.3), (0.2, 0.3, 0.4)):
        yield lambda r=rates: tree_max(r, 30, 1, 0.0, simulations)
    for prevalence in (0.05, 0.3):
        for human in (50, 200):
            yield lambda q=prevalence, h=human: judge(q, h, simulations)


# --- hit@k over attempt units (issue 34) -------------------------------------------------

HIT_K = 5
HIT_ATTEMPTS = 6
HIT_RESAMPLES = 1000
HITS_START, HITS_END = "<!-- coverage-study-hits:start -->", "<!-- coverage-study-hits:end -->"


@dataclass(frozen=True)
class HitCell:
    """hit@k's interval in one design: corix's, and each method tried beside it."""

    setting: str
    simulations: int
    methods: dict[str, tuple[float, float, float]]
    """method → (coverage, mean width, share of intervals that are one point)."""
    bias: float
    """Mean hit@k estimate minus the truth (pass@k is unbiased: Monte Carlo error only)."""

    @property
    def narrowest_covering(self) -> tuple[str, float] | None:
        """The narrowest method covering at least 0.93, and corix's width over its width."""
        covering = {m: w for m, (c, w, _) in self.methods.items() if c >= 0.93}
        if not covering:
            return None
        best = min(covering, key=lambda m: covering[m])
        return best, self.methods["corix"][1] / covering[best]

    def row(self) -> str:
        coverage, width, point = self.methods["corix"]
        error = 1.96 * math.sqrt(max(coverage * (1 - coverage), 0.0025) / self.simulations)
        before = self.methods["percentile bootstrap (before)"]
        narrowest = self.narrowest_covering
        ratio = "—" if narrowest is None else f"{narrowest[0]}, {narrowest[1]:.2f}×"
        return (
            f"| {self.setting} | **{coverage:.3f}** ±{error:.3f} | {width:.3f} | {point:.0%} | "
            f"{self.bias:+.3f} | {before[0]:.3f} / {before[1]:.3f} / {before[2]:.0%} | {ratio} |"
        )


def _hit_truth(rate: float, sd: float) -> float:
    """E over templates of 1 − (1 − p_t)^k, logit p_t ~ N(logit rate, sd²)."""
    nodes, weights = np.polynomial.hermite_e.hermegauss(80)
    p = expit(logit(rate) + sd * nodes)
    return float(weights @ (1 - (1 - p) ** HIT_K) / math.sqrt(2 * math.pi))


def hit_cell(
    templates: int, rate: float, sd: float, simulations: int, attempts: int = HIT_ATTEMPTS
) -> HitCell:
    """``templates`` persona templates × ``attempts``, k = 5; a template's per-attempt rate
    has log-odds N(logit rate, sd²). The truth is the mean hit@5 over templates. With 5
    attempts each template's hit@5 is 0 or 1, where plain Wilson dips."""
    rng = np.random.default_rng([templates, int(rate * 1000), int(sd * 10), attempts])
    per_count = np.array([hit_at_k(attempts, c, HIT_K) for c in range(attempts + 1)])
    truth = _hit_truth(rate, sd)
    t_quantile = float(stats.t.ppf(0.5 + CONFIDENCE / 2, templates - 1))
    bounds: dict[str, list[tuple[float, float]]] = {
        "corix": [],
        "percentile bootstrap (before)": [],
        "plain Wilson over templates": [],
        "t over templates": [],
    }
    means = np.empty(simulations)
    for s in range(simulations):
        p = expit(logit(rate) + sd * rng.normal(size=templates))
        hits = per_count[rng.binomial(attempts, p)]
        mean = means[s] = float(hits.mean())
        bounds["corix"].append(hit_interval(list(hits), CONFIDENCE))
        weights = rng.multinomial(templates, np.full(templates, 1 / templates), HIT_RESAMPLES)
        replicates = weights @ hits / templates
        low, high = np.percentile(replicates, [2.5, 97.5])
        bounds["percentile bootstrap (before)"].append((float(low), float(high)))
        bounds["plain Wilson over templates"].append(wilson_bounds(mean, templates, CONFIDENCE))
        half = t_quantile * float(hits.std(ddof=1)) / math.sqrt(templates)
        bounds["t over templates"].append((max(0.0, mean - half), min(1.0, mean + half)))
    methods = {}
    for name, found in bounds.items():
        ends = np.array(found)
        widths = ends[:, 1] - ends[:, 0]
        methods[name] = (
            _covered(ends[:, 0], ends[:, 1], truth),
            float(widths.mean()),
            float(np.mean(widths == 0)),
        )
    setting = f"{templates} templates × {attempts}, rate {rate}, template SD {sd}"
    return HitCell(setting, simulations, methods, float(means.mean()) - truth)


def hit_cells(simulations: int) -> Iterator[Callable[[], HitCell]]:
    for templates in (3, 6, 20):
        for rate in (0.01, 0.03, 0.1, 0.3):
            for sd in (0.0, 1.0):
                yield lambda t=templates, r=rate, s=sd: hit_cell(t, r, s, simulations)
    for rate in (0.01, 0.05):  # 0/1 hits: Bernoulli units, where plain Wilson falls short
        yield lambda r=rate: hit_cell(10, r, 0.0, simulations, attempts=HIT_K)


def hit_table(results: list[HitCell], simulations: int) -> str:
    return "\n".join(
        [
            HITS_START,
            f"hit@{HIT_K}, nominal 95%, {simulations:,} simulated evaluations a cell; ± is "
            "1.96 Monte Carlo standard errors. *Point*: the share of intervals that are one "
            "point (e.g. [0, 0]). *Narrowest covering*: of the methods tried (corix's; the "
            "percentile bootstrap over templates it replaced; plain Wilson and Student's t "
            "over templates), the narrowest covering at least 0.93, and corix's width over it.",
            "",
            "| setting | coverage | mean width | point | bias | before: coverage / width / point "
            "| narrowest covering, width ratio |",
            "|---|---|---|---|---|---|---|",
            *(cell.row() for cell in results),
            HITS_END,
        ]
    )


# --- Sequential runs (issue 34) --------------------------------------------------------

SEQUENTIAL_START = "<!-- coverage-study-sequential:start -->"
SEQUENTIAL_END = "<!-- coverage-study-sequential:end -->"
SEQUENTIAL_RATES = (0.0, 0.005, 0.02, 0.1, 0.25, 0.5, 0.95)
GATE_RATES = (0.05, 0.08, 0.1, 0.12)
GATE_CAP = 400


def width_rule_rows(width: float = 0.1, wave: int = 20) -> list[str]:
    """``--until width`` alone: exact coverage at the stop (no simulation)."""
    cap = 2 * n_for_width(0.5, width)
    rows = []
    for found in width_rule_coverage(SEQUENTIAL_RATES, width, wave, cap):
        rows.append(
            f"| `--until width={width}`, waves of {wave} | rate {found.rate:g} | "
            f"**{found.coverage:.3f}** exact | {found.mean_estimate - found.rate:+.4f} | "
            f"{found.expected_n:.1f} | {found.width_met:.3f} | — |"
        )
    grid = (np.arange(2000) + 0.5) / 2000
    for waves in (10, 20):
        lowest = min(width_rule_coverage(grid, width, waves, cap), key=lambda c: c.coverage)
        rows.append(
            f"| `--until width={width}`, waves of {waves} | lowest of 2,000 rates (at "
            f"{lowest.rate:.4f}) | **{lowest.coverage:.3f}** exact | "
            f"{lowest.mean_estimate - lowest.rate:+.4f} | {lowest.expected_n:.1f} | "
            f"{lowest.width_met:.3f} | — |"
        )
    return rows


def gate_row(rate: float, simulations: int, wave: int = 20) -> str:
    """``--until gate --until cap=400`` at a gate of 0.1 (the confidence sequence)."""
    rule = StoppingRule(gate=True, wave=wave, cap=GATE_CAP)
    rng = np.random.default_rng([int(rate * 1000), GATE_CAP])
    covered, used, undecided, estimates = 0, 0, 0, 0.0
    for _ in range(simulations):
        values = list(rng.binomial(1, rate, GATE_CAP).astype(float))
        progress = cell_progress(
            values, list(range(GATE_CAP)), rule, ran=GATE_CAP, planned=GATE_CAP, threshold=0.1
        )
        covered += progress.low <= rate <= progress.high
        used += progress.n
        undecided += progress.stopped == UNDECIDED
        estimates += sum(values[: progress.n]) / progress.n
    coverage = covered / simulations
    error = 1.96 * math.sqrt(max(coverage * (1 - coverage), 0.0025) / simulations)
    return (
        f"| `--until gate --until cap={GATE_CAP}`, gate 0.1, waves of {wave} | rate {rate:g} | "
        f"**{coverage:.3f}** ±{error:.3f} | {estimates / simulations - rate:+.4f} | "
        f"{used / simulations:.1f} | — | {undecided / simulations:.0%} |"
    )


def sequential_table(rows: list[str], simulations: int) -> str:
    return "\n".join(
        [
            SEQUENTIAL_START,
            "Nominal 95%. The width rule's coverage is exact (a sum over every path of 0/1 "
            "verdicts, `corix.measurement.stopping.width_rule`); the gate rows simulate "
            f"{simulations:,}"
            " runs each through `cell_progress` (± is 1.96 Monte Carlo standard errors) and "
            "count the interval at the stop.",
            "",
            "| rule | cell | coverage at the stop | bias of the rate at the stop | mean dialogues "
            "| width met | undecided at the cap |",
            "|---|---|---|---|---|---|---|",
            *rows,
            SEQUENTIAL_END,
        ]
    )


def table(results: list[Cell], simulations: int, seconds: float) -> str:
    lines = [
        START,
        f"Nominal 95%; {simulations:,} simulated evaluations a cell (the binomial cells are "
        "exact); ± is 1.96 Monte Carlo standard errors. *Before* is the method before issue "
        "21 on the same simulated data; *plain percentile* (trees) draws the same stages "
        "as corix now does but reads the plain percentile interval of the node itself. "
        f"`python benchmarks/coverage_study.py --part intervals` ({seconds / 60:.0f} min on a "
        "shared 2-core machine) rewrites this table.",
        "",
        "| design | setting | coverage | mean width | before: coverage / width "
        "| plain percentile: coverage / width |",
        "|---|---|---|---|---|---|",
        *(cell.row() for cell in results),
        END,
    ]
    return "\n".join(lines)


def _rewrite(start: str, end: str, text: str) -> None:
    document = DOCS.read_text(encoding="utf-8")
    pattern = re.compile(re.escape(start) + ".*?" + re.escape(end), re.DOTALL)
    DOCS.write_text(pattern.sub(lambda _: text, document), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--simulations", type=int, default=2000)
    parser.add_argument(
        "--part",
        choices=("all", "intervals", "clusters", "hits-and-sequential"),
        default="all",
        help="which tables",
    )
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args(argv)
    passed = True
    if args.part in ("all", "intervals"):
        started = time.perf_counter()
        results = []
        for thunk in cells(args.simulations):
            cell = thunk()
            print(cell.row(), flush=True)
            results.append(cell)
        text = table(results, args.simulations, time.perf_counter() - started)
        if not args.no_write:
            _rewrite(START, END, text)
        passed = all(cell.coverage >= 0.93 for cell in results)
    if args.part in ("all", "clusters"):
        started = time.perf_counter()
        found: list[ClusterCell | PlanCell] = []
        for make in cluster_cells():
            result = measured_cluster_cell(make, args.simulations)
            print(result.row(), flush=True)
            found.append(result)
        text = cluster_table(found, args.simulations, time.perf_counter() - started)
        if not args.no_write:
            _rewrite(CLUSTERS_START, CLUSTERS_END, text)
        passed = passed and all(
            cell.met >= 0.8 if isinstance(cell, PlanCell) else cell.corix[0] >= 0.93
            for cell in found
        )
    if args.part in ("all", "hits-and-sequential"):
        hits, sequential, covered = _issue_34_sections(args.simulations)
        if not args.no_write:
            _rewrite(HITS_START, HITS_END, hits)
            _rewrite(SEQUENTIAL_START, SEQUENTIAL_END, sequential)
        passed = passed and covered
    return 0 if passed else 1


def _issue_34_sections(simulations: int) -> tuple[str, str, bool]:
    """hit@k's and the sequential rules' tables, and whether every cell covers."""
    hits = []
    for thunk in hit_cells(simulations):
        hits.append(thunk())
        print(hits[-1].row(), flush=True)
    rows = width_rule_rows()
    rows += [gate_row(rate, simulations // 4) for rate in GATE_RATES]
    print("\n".join(rows), flush=True)
    covered = all(cell.methods["corix"][0] >= 0.93 for cell in hits)
    return hit_table(hits, simulations), sequential_table(rows, simulations // 4), covered


if __name__ == "__main__":
    sys.exit(main())
