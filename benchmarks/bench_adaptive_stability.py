"""Adaptive stability against five fixed repeats: the same settled labels for fewer calls.

    python benchmarks/bench_adaptive_stability.py --sessions 300 --noise 0.1 0.2 0.3 0.4

The LLM harm judge (``llm-harms``: four harm packs, one item per session and harm) runs
against the in-process mock model made a noisy judge: each repeat gives the item's one
settled answer, except a share ``--noise`` of repeats that give a fresh random answer.
The same sessions are annotated twice, in two copies of one SQLite file:

* **fixed**: ``--repeats 5``, every item asked five times;
* **adaptive**: ``--repeats 5 --adaptive`` with the default stopping rule: an item stops
  once the chance that its remaining repeats would settle it otherwise is at most
  ``--max-change`` for the judge noise the pilot measured from the first two runs of the
  items of 200 sessions drawn from ``--seed`` (the mock's noise is not told).

Both use the same seeds, so an adaptive item's runs are the first runs of its fixed item.
Reports, per noise level, the share of items whose settled answers (the stored consensus
of each question) are the same in both, and the judge calls of each.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import tempfile
from collections import defaultdict
from pathlib import Path

from bench_annotation import make_sessions
from corix.assessment.annotation_run import AnnotateOptions, annotate_run_async
from corix.llm import EndpointConfig, LLMClient
from corix.llm.mock_model import MockModel
from corix.llm.scripted import ScriptedTransport
from corix.storage import Database
from corix.storage.annotations import load_consensus

ANNOTATOR = "llm-harms"
REPEATS = 5

Item = tuple[str, str]
Labels = dict[Item, dict[tuple[str, int | None], object]]


async def annotate(
    db: Database, run_id: str, noise: float, options: AnnotateOptions
) -> tuple[int, float | None]:
    """Annotate with the noisy mock judge; return the judge calls made and, adaptive, the
    judge noise the pilot measured."""
    endpoint = EndpointConfig(name="judge", transport="mock", model="corix-mock")
    transport = ScriptedTransport(MockModel(judge_noise=noise))
    async with LLMClient(endpoint, transport=transport) as client:
        summary = await annotate_run_async(db, run_id, ANNOTATOR, options=options, client=client)
    return summary.model_calls, summary.judge_noise


def settled_labels(db: Database, run_id: str) -> Labels:
    labels: Labels = defaultdict(dict)
    for row in load_consensus(db, run_id=run_id):
        labels[(row.session_id, row.category)][(row.question_id, row.turn_index)] = row.value
    return labels


def compare(sessions: int, noise: float, fixed: AnnotateOptions, adaptive: AnnotateOptions) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        first, second = Path(tmp) / "fixed.db", Path(tmp) / "adaptive.db"
        db = Database(f"sqlite:///{first}")
        run_id = make_sessions(db, sessions)
        db.dispose()
        shutil.copyfile(first, second)
        results = {}
        for name, path, options in (("fixed", first, fixed), ("adaptive", second, adaptive)):
            db = Database(f"sqlite:///{path}")
            calls, measured = asyncio.run(annotate(db, run_id, noise, options))
            results[name] = (calls, measured, settled_labels(db, run_id))
            db.dispose()
    fixed_calls, _, fixed_labels = results["fixed"]
    adaptive_calls, measured, adaptive_labels = results["adaptive"]
    same = sum(adaptive_labels.get(item) == labels for item, labels in fixed_labels.items())
    print(
        f"  noise {noise:<4g} items {len(fixed_labels)}  fixed calls {fixed_calls}  "
        f"adaptive calls {adaptive_calls} ({adaptive_calls / fixed_calls:.3f}x)  "
        f"same settled labels {same / len(fixed_labels):.2%}  measured noise {measured:.3f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=300)
    parser.add_argument("--noise", type=float, nargs="+", default=[0.1, 0.2, 0.3, 0.4])
    parser.add_argument("--max-change", type=float, default=0.07)
    parser.add_argument("--judge-noise", type=float, default=0.4)
    parser.add_argument("--max-flip-rate", type=float, default=0.0)
    parser.add_argument("--min-repeats", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0, help="the annotation seed (repeats' seeds)")
    args = parser.parse_args()
    fixed = AnnotateOptions(repeats=REPEATS, concurrency=32, temperature=1.0, seed=args.seed)
    adaptive = fixed.model_copy(
        update={
            "adaptive": True,
            "min_repeats": args.min_repeats,
            "max_change": args.max_change,
            "judge_noise": args.judge_noise,
            "max_flip_rate": args.max_flip_rate,
        }
    )
    print(
        f"Adaptive stability ({ANNOTATOR}, {REPEATS} fixed repeats; adaptive: at least "
        f"{args.min_repeats}, max change {args.max_change:g} at judge noise "
        f"{args.judge_noise:g}, max flip rate {args.max_flip_rate:g}; seed {args.seed})"
    )
    for noise in args.noise:
        compare(args.sessions, noise, fixed, adaptive)


if __name__ == "__main__":
    main()
