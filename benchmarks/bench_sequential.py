"""Sequential runs against a fixed plan, and confidence sequences under monitoring.

    python benchmarks/bench_sequential.py --reps 50 --coverage-reps 1000

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
   width (Wilson at the fixed n; the confidence sequence at the sequential stop) and its
   coverage.
2. **Coverage under monitoring.** Intervals read after every wave up to ``--horizon``
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

from corix.measurement.confidence_sequences import excludes_ever
from corix.measurement.defect_rates import wilson_interval
from corix.measurement.sample_size import n_for_width
from corix.measurement.stopping_rules import StoppingRule, cell_progress, stopping_horizon

CELL_RATES = (0.0, 0.01, 0.02, 0.05, 0.25, 0.35, 0.9, 0.97)
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
    return StoppingRule(width=width, gate=gate, wave=wave, horizon=stopping_horizon(width, 0.95))


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
    args = parser.parse_args(argv)
    started = time.perf_counter()
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
