"""Adaptive stability against five fixed repeats: the same settled labels for fewer calls.

    python benchmarks/bench_adaptive_stability.py --sessions 300 --noise 0.2 --max-flip-rate 0.34

The LLM harm judge (``llm-harms``: four harm packs, one item per session and harm) runs
against the in-process mock model made a noisy judge: each repeat gives the item's one
settled answer, except a share ``--noise`` of repeats that give a fresh random answer.
The same sessions are annotated twice, in two copies of one SQLite file:

* **fixed**: ``--repeats 5``, every item asked five times;
* **adaptive**: ``--repeats 5 --adaptive --min-repeats 2 --max-flip-rate F``: an item
  stops once the runs left cannot change its settled answer or its flip rate is at most F.

Reports the share of items whose settled answers (the stored consensus of each question)
are the same in both, and the judge calls of each.
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


async def annotate(db: Database, run_id: str, noise: float, options: AnnotateOptions) -> int:
    """Annotate with the noisy mock judge; return the judge calls made."""
    endpoint = EndpointConfig(name="judge", transport="mock", model="corix-mock")
    transport = ScriptedTransport(MockModel(judge_noise=noise))
    async with LLMClient(endpoint, transport=transport) as client:
        summary = await annotate_run_async(db, run_id, ANNOTATOR, options=options, client=client)
    return summary.model_calls


def settled_labels(db: Database, run_id: str) -> Labels:
    labels: Labels = defaultdict(dict)
    for row in load_consensus(db, run_id=run_id):
        labels[(row.session_id, row.category)][(row.question_id, row.turn_index)] = row.value
    return labels


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=300)
    parser.add_argument("--noise", type=float, default=0.2)
    parser.add_argument("--max-flip-rate", type=float, default=0.34)
    parser.add_argument("--min-repeats", type=int, default=2)
    args = parser.parse_args()
    fixed = AnnotateOptions(repeats=REPEATS, concurrency=32, temperature=1.0)
    adaptive = fixed.model_copy(
        update={
            "adaptive": True,
            "min_repeats": args.min_repeats,
            "max_flip_rate": args.max_flip_rate,
        }
    )
    with tempfile.TemporaryDirectory() as tmp:
        first, second = Path(tmp) / "fixed.db", Path(tmp) / "adaptive.db"
        db = Database(f"sqlite:///{first}")
        run_id = make_sessions(db, args.sessions)
        db.dispose()
        shutil.copyfile(first, second)
        results = {}
        for name, path, options in (("fixed", first, fixed), ("adaptive", second, adaptive)):
            db = Database(f"sqlite:///{path}")
            calls = asyncio.run(annotate(db, run_id, args.noise, options))
            results[name] = (calls, settled_labels(db, run_id))
            db.dispose()
    fixed_calls, fixed_labels = results["fixed"]
    adaptive_calls, adaptive_labels = results["adaptive"]
    same = sum(adaptive_labels.get(item) == labels for item, labels in fixed_labels.items())
    print(f"Adaptive stability ({ANNOTATOR}, judge noise {args.noise:g})")
    print(f"  items               {len(fixed_labels)}")
    print(f"  fixed judge calls   {fixed_calls} ({REPEATS} repeats)")
    print(
        f"  adaptive calls      {adaptive_calls} (min {args.min_repeats}, "
        f"max flip rate {args.max_flip_rate:g})"
    )
    print(f"  calls ratio         {adaptive_calls / fixed_calls:.3f}")
    print(f"  same settled labels {same / len(fixed_labels):.2%}")


if __name__ == "__main__":
    main()
