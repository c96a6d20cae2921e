"""Human labels chosen by `corix plan labels` against labels drawn uniformly at random.

Each simulated evaluation has cells of judged dialogues with unequal prevalence; an LLM
judge (sensitivity, specificity) rates every dialogue; people have already labelled a
pilot drawn at random from all of them. Then ``budget`` more dialogues are labelled,
either as the plan chooses (:func:`corix.measurement.sizing.label_plan.allocate`, dialogues drawn
at random within each cell's judge-verdict strata) or uniformly at random from the rest;
each cell's judge-corrected rate is computed as corix does, the same way in both arms
(:func:`corix.measurement.judges.pooling.corrected_rates`: the judge's error partially
pooled over the cells; ``--per-cell``:
:func:`corix.measurement.judges.corrected_rate.corrected_rate` cell by cell), and its
coverage of the cell's true prevalence and its width are compared. The first designs hold
only rare harms (prevalence 10% or less), as most defect rates are; the others hold a
common harm among rare ones. In the third and the last design the judge misses more defects
in the rarer cells, to check that pooling, and a plan that counts on it, do not cost
coverage where the judge's error truly differs.

    python benchmarks/bench_label_allocation.py [--simulations 400] [--per-cell]
    python benchmarks/bench_label_allocation.py --ceiling [--simulations 100]
    python benchmarks/bench_label_allocation.py --bound

``--ceiling`` bounds what any allocation over verdict strata can gain for the per-cell
estimator:
per cell, its share of the labels (pilot + budget over the cells) is split between the
judge's "yes" and "no" dialogues at fixed shares, the truth of each stratum known in
advance, and the narrowest mean width is divided by the proportional (uniform) split's,
on the same simulated evaluations. ``--bound`` is the large-sample limit of any allocation
across cells and strata for the per-cell model (:func:`bound`).
"""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy import optimize

from corix.measurement.judges.corrected_rate import corrected_rate
from corix.measurement.judges.pooling import corrected_rates
from corix.measurement.sizing.label_information import information_parts
from corix.measurement.sizing.label_plan import Stratum, allocate_with_shrinks


@dataclass(frozen=True)
class Design:
    """Cells of ``dialogues`` judged dialogues each, at ``prevalences``; a judge with
    ``sensitivity`` and ``specificity``; ``pilot`` labels drawn at random, then ``budget``."""

    prevalences: tuple[float, ...]
    dialogues: int
    sensitivity: float
    specificity: float
    pilot: int
    budget: int
    sensitivities: tuple[float, ...] = ()
    """Per cell, where the judge's sensitivity differs by cell (else ``sensitivity``)."""

    def se(self, at: int) -> float:
        return self.sensitivities[at] if self.sensitivities else self.sensitivity

    def row(self) -> str:
        se = "/".join(map(str, self.sensitivities)) if self.sensitivities else self.sensitivity
        return (
            f"{len(self.prevalences)} cells × {self.dialogues}, judge Se {se} "
            f"Sp {self.specificity}, {self.pilot} pilot + {self.budget} labels"
        )


DESIGNS = (
    # every harm rare, as most defect rates are
    Design((0.005, 0.01, 0.02, 0.05), 2000, 0.85, 0.95, 200, 800),
    Design((0.01, 0.02, 0.05, 0.1), 2000, 0.85, 0.95, 200, 800),
    Design((0.005, 0.01, 0.02, 0.05), 2000, 0.85, 0.95, 200, 800, (0.7, 0.8, 0.9, 0.95)),
    # a common harm among rare ones
    Design((0.02, 0.05, 0.15, 0.4), 400, 0.8, 0.95, 40, 160),
    Design((0.02, 0.05, 0.1, 0.2), 2000, 0.85, 0.9, 200, 800),
    Design((0.02, 0.05, 0.1, 0.2), 2000, 0.9, 0.95, 200, 800),
    Design((0.02, 0.05, 0.1, 0.2), 2000, 0.85, 0.9, 200, 800, (0.7, 0.8, 0.9, 0.95)),
)


@dataclass
class Cell:
    prevalence: float
    covered: dict[str, list[bool]] = field(default_factory=lambda: {"plan": [], "uniform": []})
    widths: dict[str, list[float]] = field(default_factory=lambda: {"plan": [], "uniform": []})
    expected: list[float] = field(default_factory=list)
    """The plan's expected width, as `corix plan labels` shows it: the pilot's corrected
    width × the standard deviation after the plan ÷ before."""


def one_evaluation(
    rng: np.random.Generator,
    design: Design,
    cells: Sequence[Cell],
    seed: int,
    *,
    per_cell: bool = False,
) -> None:
    truth = [rng.random(design.dialogues) < c.prevalence for c in cells]
    judge = [
        np.where(t, rng.random(len(t)) < design.se(at), rng.random(len(t)) >= design.specificity)
        for at, t in enumerate(truth)
    ]
    every = np.concatenate(truth)
    verdict_all = np.concatenate(judge)
    cell_of = np.repeat(np.arange(len(cells)), design.dialogues)
    pilot = set(rng.choice(len(every), design.pilot, replace=False).tolist())
    rest = [i for i in range(len(every)) if i not in pilot]
    planned, shrinks = _planned(rng, (every, verdict_all, cell_of), pilot, design.budget)
    chosen = {
        "uniform": pilot | set(rng.choice(rest, design.budget, replace=False).tolist()),
        "plan": pilot | planned,
    }
    groups = [{"cell": str(at)} for at in range(len(cells))]
    members = [np.flatnonzero(cell_of == at) for at in range(len(cells))]
    judged = [{str(i): float(verdict_all[i]) for i in m} for m in members]
    if not per_cell:
        piloted = {str(i): float(every[i]) for i in pilot}
        before = corrected_rates(groups, judged, piloted, judge="llm", reference="human", seed=seed)
        for cell, result, shrink in zip(cells, before, shrinks, strict=True):
            assert result.ci_low is not None and result.ci_high is not None
            cell.expected.append((result.ci_high - result.ci_low) * shrink)
    for arm, labelled in chosen.items():
        trusted = {str(i): float(every[i]) for i in labelled}
        if per_cell:
            results = [
                corrected_rate(g, j, trusted, judge="llm", reference="human", seed=seed)
                for g, j in zip(groups, judged, strict=True)
            ]
        else:
            results = corrected_rates(
                groups, judged, trusted, judge="llm", reference="human", seed=seed
            )
        for cell, result in zip(cells, results, strict=True):
            assert result.ci_low is not None and result.ci_high is not None
            cell.covered[arm].append(result.ci_low <= cell.prevalence <= result.ci_high)
            cell.widths[arm].append(result.ci_high - result.ci_low)


def _planned(
    rng: np.random.Generator,
    sample: tuple[np.ndarray, np.ndarray, np.ndarray],
    pilot: set[int],
    budget: int,
) -> tuple[set[int], np.ndarray]:
    """The plan's labels: allocated over each cell's verdict strata from what the pilot
    labels say, drawn at random inside each stratum; and each cell's expected standard
    deviation after them ÷ before, as the plan computes it."""
    truth, verdicts, cell_of = sample
    strata, free_lists = [], []
    for at in range(int(cell_of.max()) + 1):
        pair = []
        for flagged in (True, False):
            members = np.flatnonzero((cell_of == at) & (verdicts == flagged)).tolist()
            free = [i for i in members if i not in pilot]
            rng.shuffle(free)
            known = [i for i in members if i in pilot]
            defects = int(truth[known].sum()) if known else 0
            pair.append(Stratum(len(members), len(known), defects, tuple(map(str, free))))
            free_lists.append(free)
        strata.append((pair[0], pair[1]))
    added, shrinks = allocate_with_shrinks(strata, budget)
    chosen: set[int] = set()
    for at, (yes, no) in enumerate(added):
        chosen.update(free_lists[2 * at][:yes])
        chosen.update(free_lists[2 * at + 1][:no])
    return chosen, shrinks


def study(
    design: Design, simulations: int, seed: int = 38, *, per_cell: bool = False
) -> list[Cell]:
    rng = np.random.default_rng(seed)
    cells = [Cell(p) for p in design.prevalences]
    for run in range(simulations):
        one_evaluation(rng, design, cells, run, per_cell=per_cell)
    return cells


YES_SHARES = (0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5)


def ceiling(design: Design, simulations: int, seed: int = 38) -> list[tuple[float | None, float]]:
    """Per cell: the best "yes" share (``None``: proportional) and its mean width ÷ the
    proportional split's."""
    rng = np.random.default_rng(seed)
    labels = (design.pilot + design.budget) // len(design.prevalences)
    found = []
    for prevalence in design.prevalences:
        widths: dict[float | None, list[float]] = {share: [] for share in (None, *YES_SHARES)}
        for run in range(simulations):
            truth = rng.random(design.dialogues) < prevalence
            verdicts = np.where(
                truth,
                rng.random(design.dialogues) < design.sensitivity,
                rng.random(design.dialogues) >= design.specificity,
            )
            yes = rng.permutation(np.flatnonzero(verdicts))
            no = rng.permutation(np.flatnonzero(~verdicts))
            judged = {str(i): float(v) for i, v in enumerate(verdicts)}
            for share in widths:
                # None: the proportional split, what uniform draws give on average
                wanted = len(yes) / design.dialogues if share is None else share
                take = min(round(labels * wanted), len(yes))
                labelled = [*yes[:take], *no[: labels - take]]
                trusted = {str(i): float(truth[i]) for i in labelled}
                result = corrected_rate(
                    {}, judged, trusted, judge="llm", reference="human", seed=run
                )
                assert result.ci_low is not None and result.ci_high is not None
                widths[share].append(result.ci_high - result.ci_low)
        proportional = statistics.mean(widths[None])
        best = min(widths, key=lambda share: statistics.mean(widths[share]))
        found.append((best, statistics.mean(widths[best]) / proportional))
    return found


def bound(design: Design, *, pooled: bool = False) -> tuple[list[float], float]:
    """The large-sample limit for the per-cell model (``pooled``: one sensitivity and
    specificity for all cells): per cell, the standard deviation of its rate under the
    allocation of all the labels (pilot + budget) over the cells' strata that minimizes
    the mean over cells of sd ÷ the proportional split's sd, as a ratio; then that mean.
    The truth of every stratum is known in advance."""
    labels = design.pilot + design.budget
    parts = [
        information_parts(prevalence, design.se(at), design.specificity)
        for at, prevalence in enumerate(design.prevalences)
    ]

    cells = len(parts)
    # each cell's (rate, sensitivity, specificity) among the parameters
    where = [
        [at, cells, cells + 1] if pooled else [3 * at, 3 * at + 1, 3 * at + 2]
        for at in range(cells)
    ]

    def sds(counts: np.ndarray) -> np.ndarray:
        size = cells + 2 if pooled else 3 * cells
        information = np.zeros((size, size))
        for cell, (yes, no), at in zip(parts, counts.reshape(-1, 2), where, strict=True):
            for n, (g, v) in zip((design.dialogues, yes, no), cell, strict=True):
                information[np.ix_(at, at)] += n / v * np.outer(g, g)
        covariance = np.linalg.inv(information)
        return np.sqrt(np.array([covariance[at[0], at[0]] for at in where]))

    shares = [
        p * design.se(at) + (1 - p) * (1 - design.specificity)
        for at, p in enumerate(design.prevalences)
    ]
    even = labels / len(shares)
    proportional = sds(np.array([[even * q, even * (1 - q)] for q in shares]).ravel())

    def mean_ratio(z: np.ndarray) -> float:
        counts = np.exp(z) / np.exp(z).sum() * labels + 1e-6
        return float(np.mean(sds(counts) / proportional))

    start = np.log(np.array([[even * q, even * (1 - q)] for q in shares]).ravel())
    best = optimize.minimize(mean_ratio, start, method="Nelder-Mead", options={"maxiter": 4000})
    counts = np.exp(best.x) / np.exp(best.x).sum() * labels
    return list(sds(counts) / proportional), float(best.fun)


HEADER = [
    "| design | prevalence | plan: coverage | plan: mean width (expected) | uniform: coverage "
    "| uniform: mean width | plan ÷ uniform width |",
    "|---|---|---|---|---|---|---|",
]


def rows(design: Design, cells: Sequence[Cell]) -> list[str]:
    """One row per cell, then the mean width ratio over the design's cells."""
    lines, ratios = [], []
    for cell in cells:
        plan = statistics.mean(cell.widths["plan"])
        uniform = statistics.mean(cell.widths["uniform"])
        ratios.append(plan / uniform)
        expected = f" ({statistics.mean(cell.expected):.3f})" if cell.expected else ""
        lines.append(
            f"| {design.row()} | {cell.prevalence:g} | {_coverage(cell.covered['plan'])} "
            f"| {plan:.3f}{expected} | {_coverage(cell.covered['uniform'])} | {uniform:.3f} "
            f"| {plan / uniform:.2f} |"
        )
    lines.append(
        f"| {design.row()} | mean over cells | | | | | **{statistics.mean(ratios):.2f}** |"
    )
    return lines


def _coverage(hits: list[bool]) -> str:
    share = statistics.mean(hits)
    margin = 1.96 * (share * (1 - share) / len(hits)) ** 0.5
    return f"**{share:.3f}** ±{margin:.3f}"


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--simulations", type=int, default=400)
    parser.add_argument("--ceiling", action="store_true", help="the best fixed split instead")
    parser.add_argument("--per-cell", action="store_true", help="no pooling across cells")
    parser.add_argument("--bound", action="store_true", help="the large-sample limit instead")
    args = parser.parse_args(argv)
    if args.bound:
        print("| design | model | best ÷ proportional sd per cell | mean over cells |")
        print("|---|---|---|---|")
        for design in DESIGNS:
            # one sensitivity for all cells is no model of a judge whose sensitivity differs
            for pooled in (False, True) if not design.sensitivities else (False,):
                per_cell, mean = bound(design, pooled=pooled)
                ratios = ", ".join(f"{r:.2f}" for r in per_cell)
                model = "one Se, Sp for all cells" if pooled else "per cell"
                print(f"| {design.row()} | {model} | {ratios} | **{mean:.2f}** |")
        return
    if args.ceiling:
        print(f"{args.simulations} simulated cells a prevalence; best of {YES_SHARES}.\n")
        print("| design | prevalence | best yes share | best ÷ proportional width |")
        print("|---|---|---|---|")
        for design in DESIGNS:
            found = ceiling(design, args.simulations)
            for prevalence, (share, ratio) in zip(design.prevalences, found, strict=True):
                best = "proportional" if share is None else f"{share:g}"
                print(f"| {design.row()} | {prevalence:g} | {best} | {ratio:.2f} |", flush=True)
            mean = statistics.mean(ratio for _, ratio in found)
            print(f"| {design.row()} | mean over cells | | **{mean:.2f}** |", flush=True)
        return
    print(
        f"{args.simulations} simulated evaluations a design; corrected rates "
        f"{'cell by cell' if args.per_cell else 'partially pooled over the cells'}; ± is "
        "1.96 Monte Carlo standard errors.\n"
    )
    print("\n".join(HEADER))
    for design in DESIGNS:
        cells = study(design, args.simulations, per_cell=args.per_cell)
        print("\n".join(rows(design, cells)), flush=True)


if __name__ == "__main__":
    main()
