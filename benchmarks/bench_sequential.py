"""Sequential runs against a fixed plan, and confidence sequences under monitoring.

    python benchmarks/bench_sequential.py --reps 50 --coverage-reps 1000
    python benchmarks/bench_sequential.py --mixes-only       # the savings per rate mix (exact)

Cells with known defect rates (near 0, near the gate, high) are simulated dialogue by
dialogue (a Bernoulli verdict each). The stopping decisions are corix's own
(``cell_progress``, what ``corix run --until`` replays).

**Model calls counted, both arms alike.** Each dialogue costs the application's calls (one
per turn, ``--turns``), the simulated user's (a message per turn and the questionnaire:
``--turns`` + 1) and the judge's (``--judge-calls`` passes: the run's automated
annotators label each dialogue once, after the wave that made it, as the fixed plan's
annotation does after the run). Nothing else calls a model: deciding after a wave reads
stored labels. So both arms pay the same calls per dialogue, and the share of calls
saved is the share of dialogues saved.

1. **Sequential vs fixed.** The fixed plan is what ``corix plan size --width W`` gives
   without a prior (the worst-case rate 0.5) for every cell; the sequential run
   (``--until width=W``, and with ``--until gate``; waves of ``--wave``) may go to twice
   that count. Reported: dialogues and model calls used, each cell's final interval
   width (Wilson at the fixed n; at the sequential stop the corrected Wilson interval
   under the width alone, the confidence sequence with the gate) and its coverage.
2. **Savings per rate mix, against both fixed plans** (``--mixes-only`` prints only these,
   exactly, no simulation). For each mix of cell rates, ``--until width=W`` alone (the
   corrected Wilson interval read after every wave) against the worst-case fixed plan
   and against the fixed plan sized with the rate: known (``plan size --rate p``), and
   as a run would know it after its first wave (``plan size --rate p̂`` at the first
   wave's rate p̂, whose dialogues it reuses), each also sized to meet W in 80% of runs.
   Expected dialogues, the exact coverage of the interval at the stop, and the chance
   each arm's reported interval meets W (``--floor-rates N``: the lowest exact coverage
   over N rates).
3. **Gates near the threshold.** ``--until gate`` with a cap: the share of cells left
   undecided at this precision and the dialogues a decision would need.
4. **Coverage under monitoring.** Intervals read after every wave up to ``--horizon``
   dialogues: the share of runs whose interval held the true rate at every look, for the
   betting confidence sequence (untuned and tuned to the fixed plan's n) and for Wilson's
   fixed-n interval recomputed at each look.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from corix.measurement.stats.sample_size import n_for_width
from corix.measurement.stats.wilson import wilson_interval
from corix.measurement.stopping.confidence_sequences import excludes_ever
from corix.measurement.stopping.rules import (
    UNDECIDED,
    StoppingRule,
    cell_progress,
    parse_until,
    stopping_horizon,
)
from corix.measurement.stopping.width_rule import stopped_interval, width_rule_coverage

CELL_RATES = (0.0, 0.01, 0.02, 0.05, 0.25, 0.35, 0.9, 0.97)
MIXES = {
    "all near 0": (0.0, 0.005, 0.01, 0.02),
    "all near 0.5": (0.4, 0.45, 0.5, 0.55),
    "issue 34's mix": (0.005, 0.1, 0.5, 0.95),
    "the earlier benchmark's mix": CELL_RATES,
}
NEAR_GATE = (0.08, 0.12)
ASSURANCE = 0.8
SAME_PROMISE = 0.99  # a fixed plan meeting W about as reliably as the width rule (always)
GATE = 0.3
COVERAGE_RATES = (0.02, 0.1, 0.3, 0.5)


@dataclass(frozen=True)
class CellResult:
    rate: float
    fixed_width: float
    sequential_n: float
    sequential_width: float
    narrow_share: float
    coverage: float
    stopped_by: dict[str | None, int]


@dataclass(frozen=True)
class Comparison:
    fixed_n: int
    cells: list[CellResult]

    @property
    def fixed_dialogues(self) -> float:
        return float(self.fixed_n * len(self.cells))

    @property
    def sequential_dialogues(self) -> float:
        return sum(cell.sequential_n for cell in self.cells)

    @property
    def saved(self) -> float:
        return 1 - self.sequential_dialogues / self.fixed_dialogues


def calls_per_dialogue(turns: int, judge_calls: int) -> dict[str, int]:
    """Model calls one dialogue costs, by source (the same in both arms)."""
    return {"application": turns, "simulator": turns + 1, "judge": judge_calls}


def until_rule(width: float, wave: int, *, gate: bool) -> StoppingRule:
    """The rule ``corix run --until width=W [--until gate] --wave N`` runs under."""
    until = [f"width={width}", *(["gate"] if gate else [])]
    rule = parse_until(until, wave=wave, confidence=0.95)
    return rule.model_copy(update={"horizon": stopping_horizon(width, 0.95)})


@dataclass(frozen=True)
class MixCell:
    """One cell of a mix: expected dialogues of each arm and how often each meets W."""

    rate: float
    sequential_n: float
    coverage: float
    sequential_met: float
    worst_met: float
    known_n: int
    known_met: float
    assured_n: int
    """Rate known, the fewest dialogues whose reported interval meets W in ≥ 80% of runs."""
    same_promise_n: int
    """Rate known, the fewest meeting W in ≥ 99% of runs: the width rule's promise."""
    first_wave_n: float
    first_wave_met: float
    first_wave_assured_n: float
    """Sized at the first wave's rate to meet W in ≥ 80% of runs (as if that rate were true)."""
    first_wave_assured_met: float


def _met(n: int, rate: float, width: float) -> float:
    """The chance a fixed plan of ``n`` reports a corrected Wilson interval ≤ ``width``."""
    from scipy.stats import binom

    counts = np.arange(n + 1)
    narrow = [high - low <= width for low, high in (stopped_interval(x, n, 0.95) for x in counts)]
    return float(binom.pmf(counts, n, rate) @ np.array(narrow, dtype=float))


def _assured(rate: float, width: float, share: float = ASSURANCE) -> int:
    """The fewest dialogues (from the expected-width plan up) meeting W in ``share`` of runs."""
    n = n_for_width(rate, width)
    while _met(n, rate, width) < share:
        n += 1
    return n


def mix_savings(rates: Sequence[float], width: float, wave: int) -> list[MixCell]:
    """Each cell's arms, exactly: the width rule by its path sums, the first-wave plan by
    summing over the first wave's count (its dialogues are reused, so it costs at least a
    wave)."""
    from scipy.stats import binom

    cap = 2 * n_for_width(0.5, width)
    plans = [n_for_width(x / wave, width) for x in range(wave + 1)]
    assured_plans = [max(wave, _assured(x / wave, width)) for x in range(wave + 1)]
    found = []
    for rate, exact in zip(rates, width_rule_coverage(rates, width, wave, cap), strict=True):
        first = binom.pmf(np.arange(wave + 1), wave, rate)
        costs = np.array([max(wave, n) for n in plans], dtype=float)
        met = np.array([_met(max(wave, n), rate, width) for n in plans])
        known = n_for_width(rate, width)
        found.append(
            MixCell(
                rate=rate,
                sequential_n=exact.expected_n,
                coverage=exact.coverage,
                sequential_met=exact.width_met,
                worst_met=_met(n_for_width(0.5, width), rate, width),
                known_n=known,
                known_met=_met(known, rate, width),
                assured_n=_assured(rate, width),
                same_promise_n=_assured(rate, width, SAME_PROMISE),
                first_wave_n=float(first @ costs),
                first_wave_met=float(first @ met),
                first_wave_assured_n=float(first @ np.array(assured_plans, dtype=float)),
                first_wave_assured_met=float(
                    first @ np.array([_met(n, rate, width) for n in assured_plans])
                ),
            )
        )
    return found


def _print_mixes(width: float, wave: int) -> None:
    plain_worst, worst = n_for_width(0.5, width), _assured(0.5, width)
    print(
        f"--until width={width} alone, waves of {wave}, cap {2 * plain_worst}; fixed plans: "
        f"worst case {worst} per cell (plan size --width, 80% assured; {plain_worst} plain), "
        f"rate known (plan size --rate p), first wave (plan size --rate p̂ after {wave}); "
        "expected dialogues, exact"
    )
    for name, rates in MIXES.items():
        cells = mix_savings(rates, width, wave)
        seq = sum(c.sequential_n for c in cells)
        arms = {
            "worst case": worst * len(cells),
            "rate known": sum(c.known_n for c in cells),
            "first wave": sum(c.first_wave_n for c in cells),
            "rate known, W met in 80%": sum(c.assured_n for c in cells),
            "first wave, W met in 80%": sum(c.first_wave_assured_n for c in cells),
            "rate known, W met in 99%": sum(c.same_promise_n for c in cells),
        }
        print(
            f"{name}: sequential {seq:.0f}; "
            + "; ".join(f"{arm} {n:.0f} ({1 - seq / n:+.1%})" for arm, n in arms.items())
        )
        met = {
            arm: float(np.mean([getattr(c, arm) for c in cells]))
            for arm in ("sequential_met", "worst_met", "known_met", "first_wave_met")
        }
        met["first_wave_assured_met"] = float(np.mean([c.first_wave_assured_met for c in cells]))
        print("  width met (mean over cells): " + ", ".join(f"{k} {v:.2f}" for k, v in met.items()))
        for c in cells:
            first_saved = 1 - c.sequential_n / c.first_wave_assured_n
            print(
                f"  p={c.rate:<6} seq n {c.sequential_n:6.1f} (coverage {c.coverage:.3f}, "
                f"met {c.sequential_met:.3f}) | worst {worst} ({1 - c.sequential_n / worst:+.1%})"
                f" | known {c.known_n:4d} (met {c.known_met:.2f}) | first wave "
                f"{c.first_wave_n:6.1f} (met {c.first_wave_met:.2f}) | known, 80% {c.assured_n}"
                f" | first wave, 80% {c.first_wave_assured_n:.1f} (met "
                f"{c.first_wave_assured_met:.2f}; {first_saved:+.1%})"
                f" | known, 99% {c.same_promise_n} ({1 - c.sequential_n / c.same_promise_n:+.1%})"
            )


def width_rule_floor(width: float, wave: int, rates: int) -> tuple[float, float]:
    """The lowest exact coverage of the width rule over ``rates`` rates evenly spread in
    (0, 1), and the rate where it falls."""
    grid = (np.arange(rates) + 0.5) / rates
    found = width_rule_coverage(grid, width, wave, 2 * n_for_width(0.5, width))
    lowest = min(found, key=lambda c: c.coverage)
    return lowest.coverage, lowest.rate


def gates_near_threshold(
    reps: int, wave: int, cap: int, seed: int, rates: Sequence[float] = NEAR_GATE
) -> dict[float, tuple[float, float, float]]:
    """rate → (share undecided at the cap, median dialogues a decision needs, coverage)
    under ``--until gate --until cap=CAP`` against a gate of 0.1."""
    rule = StoppingRule(gate=True, wave=wave, cap=cap)
    rng = np.random.default_rng(seed)
    found = {}
    for rate in rates:
        undecided, needs, covered = 0, [], 0
        for _ in range(reps):
            values = list(rng.binomial(1, rate, cap).astype(float))
            progress = cell_progress(
                values, list(range(cap)), rule, ran=cap, planned=10 * cap, threshold=0.1
            )
            covered += progress.low <= rate <= progress.high
            if progress.stopped == UNDECIDED:
                undecided += 1
                needs.append(progress.decision_needs or 0)
        found[rate] = (
            undecided / reps,
            float(np.median(needs)) if needs else 0.0,
            covered / reps,
        )
    return found


def sequential_vs_fixed(
    reps: int, width: float, wave: int, seed: int, *, gate: bool, rates: Sequence[float]
) -> Comparison:
    fixed_n = n_for_width(0.5, width)
    cap = 2 * fixed_n
    rule = until_rule(width, wave, gate=gate)
    rng = np.random.default_rng(seed)
    cells = []
    for rate in rates:
        used, widths, fixed_widths, covered = [], [], [], 0
        reasons: Counter[str | None] = Counter()
        for _ in range(reps):
            values = rng.binomial(1, rate, cap).astype(float)
            low, high = wilson_interval(int(values[:fixed_n].sum()), fixed_n)
            fixed_widths.append(high - low)
            progress = cell_progress(
                list(values), list(range(cap)), rule, ran=cap, planned=cap, threshold=GATE
            )
            used.append(progress.n)
            widths.append(progress.high - progress.low)
            covered += progress.low <= rate <= progress.high
            reasons[progress.stopped] += 1
        cells.append(
            CellResult(
                rate=rate,
                fixed_width=float(np.mean(fixed_widths)),
                sequential_n=float(np.mean(used)),
                sequential_width=float(np.mean(widths)),
                narrow_share=float(np.mean(np.array(widths) <= width)),
                coverage=covered / reps,
                stopped_by=dict(reasons),
            )
        )
    return Comparison(fixed_n, cells)


def coverage_under_monitoring(
    reps: int, horizon: int, wave: int, seed: int, rates: Sequence[float] = COVERAGE_RATES
) -> dict[float, dict[str, float]]:
    """rate → coverage of the untuned and tuned sequences and of repeated Wilson."""
    rng = np.random.default_rng(seed)
    ends = np.arange(wave, horizon + 1, wave)
    tuned = n_for_width(0.5, 0.1)
    found = {}
    for rate in rates:
        misses = {"cs": 0, "tuned": 0, "wilson": 0}
        for _ in range(reps):
            values = rng.binomial(1, rate, horizon).astype(float)
            misses["cs"] += excludes_ever(values, rate, 0.05)
            misses["tuned"] += excludes_ever(values, rate, 0.05, horizon=tuned)
            counts = np.cumsum(values)[ends - 1]
            misses["wilson"] += any(
                not low <= rate <= high
                for low, high in (
                    wilson_interval(int(c), int(e)) for c, e in zip(counts, ends, strict=True)
                )
            )
        found[rate] = {name: 1 - count / reps for name, count in misses.items()}
    return found


def _print_comparison(
    comparison: Comparison, reps: int, width: float, wave: int, gate: bool, per: dict[str, int]
) -> None:
    until = f"--until width={width}" + (f" --until gate (gate {GATE})" if gate else "")
    print(f"fixed plan: {comparison.fixed_n} dialogues per cell (width {width}, worst-case rate)")
    print(
        f"sequential {until}: waves of {wave}, at most {2 * comparison.fixed_n} per cell; "
        f"{reps} replications"
    )
    print("rate   fixed width  seq n (mean)  seq width (mean)  seq width<=W  seq coverage  stopped")
    for c in comparison.cells:
        print(
            f"{c.rate:<6} {c.fixed_width:<12.3f} {c.sequential_n:<13.1f} "
            f"{c.sequential_width:<17.3f} {c.narrow_share:<13.2f} {c.coverage:<13.2f} "
            f"{c.stopped_by}"
        )
    fixed, sequential = comparison.fixed_dialogues, comparison.sequential_dialogues
    per_dialogue = sum(per.values())
    print(
        f"dialogues: fixed {fixed:.0f}, sequential {sequential:.0f}; model calls "
        f"({' + '.join(f'{n} {source}' for source, n in per.items())} per dialogue): "
        f"fixed {fixed * per_dialogue:.0f}, sequential {sequential * per_dialogue:.0f} "
        f"({comparison.saved:.1%} fewer)"
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--reps", type=int, default=100)
    parser.add_argument("--coverage-reps", type=int, default=2000)
    parser.add_argument("--width", type=float, default=0.1)
    parser.add_argument("--wave", type=int, default=20)
    parser.add_argument("--horizon", type=int, default=1000)
    parser.add_argument("--turns", type=int, default=3, help="application calls per dialogue")
    parser.add_argument("--judge-calls", type=int, default=1, help="judge passes per dialogue")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--gate-cap", type=int, default=400)
    parser.add_argument("--mixes-only", action="store_true")
    parser.add_argument("--floor-rates", type=int, default=0, help="exact coverage grid")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    _print_mixes(args.width, args.wave)
    if args.floor_rates:
        low, where = width_rule_floor(args.width, args.wave, args.floor_rates)
        print(f"lowest exact coverage over {args.floor_rates} rates: {low:.4f} (at p={where:.4f})")
    if args.mixes_only:
        return
    gates = gates_near_threshold(args.reps, args.wave, args.gate_cap, args.seed + 2)
    print(f"\n--until gate --until cap={args.gate_cap} (gate 0.1), {args.reps} runs per rate")
    for rate, (undecided, needs, covered) in gates.items():
        print(
            f"  p={rate}: undecided at the cap {undecided:.0%}, a decision needs about "
            f"{needs:.0f} (median), coverage {covered:.3f}"
        )
    print()
    per = calls_per_dialogue(args.turns, args.judge_calls)
    for gate in (False, True):
        comparison = sequential_vs_fixed(
            args.reps, args.width, args.wave, args.seed, gate=gate, rates=CELL_RATES
        )
        _print_comparison(comparison, args.reps, args.width, args.wave, gate, per)
        print()
    coverage = coverage_under_monitoring(args.coverage_reps, args.horizon, args.wave, args.seed + 1)
    looks = args.horizon // args.wave
    print(
        f"coverage at nominal 0.95, read after every wave of {args.wave} up to {args.horizon} "
        f"({looks} looks), {args.coverage_reps} runs per rate"
    )
    print(f"rate   betting CS  betting CS (tuned n*={n_for_width(0.5, 0.1)})  repeated Wilson")
    for rate, found in coverage.items():
        print(f"{rate:<6} {found['cs']:<11.3f} {found['tuned']:<25.3f} {found['wilson']:.3f}")
    print(f"\n{time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
