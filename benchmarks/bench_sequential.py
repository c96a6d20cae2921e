"""Sequential runs against a fixed plan, and confidence sequences under monitoring.

    python benchmarks/bench_sequential.py --reps 100 --coverage-reps 2000

Cells with known defect rates (near 0, near the gate, high) are simulated dialogue by
dialogue (a Bernoulli verdict each); every dialogue costs the same model calls (the
application's and the judge's), so dialogues saved are model calls saved. The stopping
decisions are corix's own (``cell_progress``, what ``corix run --until`` replays).

1. **Sequential vs fixed.** The fixed plan is what ``corix plan size --width W`` gives
   without a prior (the worst-case rate 0.5) for every cell; the sequential run
   (``--until width=W --until gate``, waves of ``--wave``) may go to twice that count.
   Reported: dialogues used, each cell's final interval width (Wilson at the fixed n; the
   confidence sequence at the sequential stop) and its coverage.
2. **Coverage under monitoring.** Intervals read after every wave up to ``--horizon``
   dialogues: the share of runs whose interval held the true rate at every look, for the
   betting confidence sequence (untuned and tuned to the fixed plan's n) and for Wilson's
   fixed-n interval recomputed at each look.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from corix.measurement import StoppingRule, cell_progress, stopping_horizon
from corix.measurement.confidence_sequences import excludes_ever
from corix.measurement.defect_rates import wilson_interval
from corix.measurement.sample_size import n_for_width

CELL_RATES = (0.0, 0.01, 0.02, 0.05, 0.25, 0.35, 0.9, 0.97)
GATE = 0.3


def sequential_vs_fixed(reps: int, width: float, wave: int, seed: int, *, gate: bool) -> None:
    fixed_n = n_for_width(0.5, width)
    cap = 2 * fixed_n
    rule = StoppingRule(width=width, gate=gate, wave=wave, horizon=stopping_horizon(width, 0.95))
    rng = np.random.default_rng(seed)
    until = f"--until width={width}" + (f" --until gate (gate {GATE})" if gate else "")
    print(f"fixed plan: {fixed_n} dialogues per cell (width {width} at the worst-case rate)")
    print(f"sequential {until}: waves of {wave}, at most {cap} per cell; {reps} replications")
    print(
        "rate   fixed width  seq n (mean)  seq width (mean)  seq width<=W  seq coverage  stopped by"
    )
    total_fixed = total_seq = 0.0
    for rate in CELL_RATES:
        used, widths, covered, reasons = [], [], 0, {}
        fixed_widths = []
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
            reasons[progress.stopped] = reasons.get(progress.stopped, 0) + 1
        total_fixed += fixed_n
        total_seq += float(np.mean(used))
        share_narrow = float(np.mean(np.array(widths) <= width))
        print(
            f"{rate:<6} {np.mean(fixed_widths):<12.3f} {np.mean(used):<13.1f} "
            f"{np.mean(widths):<17.3f} {share_narrow:<13.2f} {covered / reps:<13.2f} {reasons}"
        )
    saved = 1 - total_seq / total_fixed
    print(
        f"dialogues (= model calls): fixed {total_fixed:.0f}, sequential {total_seq:.0f} "
        f"({saved:.1%} fewer)"
    )


def coverage_under_monitoring(reps: int, horizon: int, wave: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    ends = np.arange(wave, horizon + 1, wave)
    tuned = n_for_width(0.5, 0.1)
    print(
        f"coverage at nominal 0.95, read after every wave of {wave} up to {horizon} "
        f"({len(ends)} looks), {reps} runs per rate"
    )
    print(f"rate   betting CS  betting CS (tuned n*={tuned})  repeated Wilson")
    for rate in (0.02, 0.1, 0.3, 0.5):
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
        print(
            f"{rate:<6} {1 - misses['cs'] / reps:<11.3f} {1 - misses['tuned'] / reps:<25.3f} "
            f"{1 - misses['wilson'] / reps:.3f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=100)
    parser.add_argument("--coverage-reps", type=int, default=2000)
    parser.add_argument("--width", type=float, default=0.1)
    parser.add_argument("--wave", type=int, default=20)
    parser.add_argument("--horizon", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    started = time.perf_counter()
    sequential_vs_fixed(args.reps, args.width, args.wave, args.seed, gate=False)
    print()
    sequential_vs_fixed(args.reps, args.width, args.wave, args.seed, gate=True)
    print()
    coverage_under_monitoring(args.coverage_reps, args.horizon, args.wave, args.seed + 1)
    print(f"\n{time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
