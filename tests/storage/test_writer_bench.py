"""The writer benchmark replays a run's records in the batches a run's writer makes
(benchmarks/bench_writer.py): its figure is only the writer's cost in a run if the mix of
sessions that start and end in one batch is a run's."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from bench_writer import session_records, windows


def _batches(sessions: int, turns: int, concurrency: int, latency_s: float) -> list[dict[str, int]]:
    records = [session_records(number, 1, turns) for number in range(sessions)]
    return [
        {
            "starts": len(batch.sessions),
            "turns": len(batch.turns),
            "ends": len(batch.finished),
            "both": len({s.id for s in batch.sessions} & {e.session_id for e in batch.finished}),
        }
        for batch in windows(records, concurrency, latency_s, batch_s=0.2)
    ]


def test_single_turn_sessions_at_100_ms_start_and_end_in_one_batch_half_the_time() -> None:
    # Waves of 50 start every 0.1 s: the wave starting at 0.0 s ends at 0.1 s (one window),
    # the one starting at 0.1 s ends at 0.2 s (the next), as a run at 50 and 100 ms does
    # (1,056 of 2,000 sessions in a captured run).
    batches = _batches(400, 1, 50, 0.1)
    assert sum(b["starts"] for b in batches) == sum(b["ends"] for b in batches) == 400
    assert sum(b["both"] for b in batches) == 200


def test_five_turn_sessions_never_end_in_the_batch_they_started_in() -> None:
    batches = _batches(200, 5, 50, 0.1)
    assert sum(b["turns"] for b in batches) == 1000
    assert sum(b["both"] for b in batches) == 0
    assert batches[0] == {"starts": 50, "turns": 50, "ends": 0, "both": 0}
