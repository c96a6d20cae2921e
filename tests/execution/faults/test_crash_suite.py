"""The fault and crash suite: a hostile judge endpoint, kill -9 at random moments, and a rerun.

The judge is the built-in mock server answering over real HTTP with 20% injected faults
(429s with a short Retry-After and 500s) and NUL bytes and lone surrogates in every piece
of reasoning. ``corix annotate --repeats 3`` is killed with SIGKILL at seeded random
moments, then run to the end; the stored passes and consensus rows must be exactly those
of an uninterrupted annotation of the same plan: nothing lost, nothing twice. Then the run
is reported. Bounded: two kills per backend, each once a random number of passes is stored.
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from corix.domain import ApplicationEntry, Level, LevelSettings, Plan
from corix.execution import execute_plan
from corix.llm.mock_server import MockServerConfig, running_mock_server
from corix.report import write_report
from corix.storage import Database, StoredValue, load_consensus, load_passes
from corix.storage.sessions import session_states

TESTS_DIR = Path(__file__).resolve().parents[2]
TRIALS = 2
FAULTS = MockServerConfig(fail_429=0.1, fail_500=0.1, retry_after_s=0.05, hostile_bytes=True)

PassKey = tuple[str, str, str, int, int, str, str | None, str]
ConsensusKey = tuple[str, str, str, str, int | None, StoredValue | None]


@pytest.fixture(autouse=True)
def _support_apps_importable() -> Iterator[None]:
    sys.path.insert(0, str(TESTS_DIR))
    yield
    sys.path.remove(str(TESTS_DIR))


def _plan() -> Plan:
    return Plan(
        name="crash",
        seed=5,
        applications=[ApplicationEntry(name="echo", spec="python:support.apps:EchoApp")],
        scenarios=["tv_spoilers"],
        levels={Level.MODEL_TESTING: LevelSettings(repeats=1)},
        concurrency=8,
    )


async def _annotate(db_url: str, run_id: str, base_url: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "corix.cli.main",
        "annotate",
        run_id,
        "--annotator",
        "llm",
        "--endpoint-url",
        base_url,
        "--model",
        "judge",
        "--repeats",
        "3",
        "--categories",
        "risk_assessment",
        "--concurrency",
        "4",
        "--allow-failures",
        "--db",
        db_url,
        env={
            **os.environ,
            "PYTHONPATH": os.pathsep.join(
                [str(TESTS_DIR), *filter(None, [os.environ.get("PYTHONPATH")])]
            ),
        },
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )


def _stored(db: Database, run_id: str) -> tuple[Counter[PassKey], Counter[ConsensusKey]]:
    """Passes and consensus rows, named by work item (session ids differ between runs)."""
    keys = {state.id: state.work_key or "" for state in session_states(db, run_id)}
    passes = Counter(
        (
            keys[p.session_id],
            p.category,
            p.annotator,
            p.pass_no,
            p.repeat_no,
            p.status,
            p.error,
            str(sorted((a.question_id, repr(a.value)) for a in p.answers)),
        )
        for p in load_passes(db, run_id=run_id)
    )
    consensus = Counter(
        (keys[c.session_id], c.category, c.annotator, c.question_id, c.turn_index, c.value)
        for c in load_consensus(db, run_id=run_id)
    )
    return passes, consensus


async def _trial(db: Database, base_url: str, kills: list[int]) -> tuple[str, list[int]]:
    """Annotate, killing the process once each count in ``kills`` of passes is stored (plus
    a random few milliseconds); return the passes stored at each kill."""
    run_id = (await execute_plan(_plan(), db)).run_id
    stored_at_kill = []
    for target in kills:
        process = await _annotate(db.url, run_id, base_url)
        deadline = asyncio.get_running_loop().time() + 60
        while process.returncode is None and asyncio.get_running_loop().time() < deadline:
            if sum(_stored(db, run_id)[0].values()) >= target:
                break
            await asyncio.sleep(0.02)
        await asyncio.sleep((target % 7) / 100)  # land anywhere, not just after a commit
        if process.returncode is None:
            process.send_signal(signal.SIGKILL)
        await process.wait()
        stored_at_kill.append(sum(_stored(db, run_id)[0].values()))
    process = await _annotate(db.url, run_id, base_url)
    output, _ = await asyncio.wait_for(process.communicate(), timeout=180)
    assert process.returncode == 0, output.decode(errors="replace")
    return run_id, stored_at_kill


@pytest.mark.parametrize(
    ("backend", "rounds"),
    [
        ("sqlite", 1),  # one kill in the default run; the soak (several, both backends) is slow
        pytest.param("sqlite", TRIALS, marks=pytest.mark.slow),
        pytest.param("postgres", TRIALS, marks=pytest.mark.slow),
    ],
)
async def test_kill_9_during_annotation_loses_nothing_and_doubles_nothing(
    backend: str, rounds: int, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    db: Database = request.getfixturevalue(f"{backend}_db")
    reference_db = Database(f"sqlite:///{tmp_path / 'uninterrupted.db'}")
    rng = random.Random(backend)
    try:
        async with running_mock_server(FAULTS) as base_url:
            reference_run, _ = await _trial(reference_db, base_url, kills=[])
            expected = _stored(reference_db, reference_run)
            assert sum(expected[0].values()) > 0 and sum(expected[1].values()) > 0
            total = sum(expected[0].values())
            kills = sorted(rng.randrange(1, total * 3 // 4) for _ in range(rounds))
            run_id, stored_at_kill = await _trial(db, base_url, kills)
        passes, consensus = _stored(db, run_id)
        # The kills landed mid-annotation: some passes were stored, not all of them.
        assert any(0 < n < sum(expected[0].values()) for n in stored_at_kill), stored_at_kill
        assert max(passes.values()) == 1 and max(consensus.values()) == 1  # nothing twice
        assert passes == expected[0]  # nothing lost, the same answers
        assert consensus == expected[1]
        stored_passes = load_passes(db, run_id=run_id)
        assert stored_passes and stored_passes[0].provenance is not None
        paths = write_report(db, run_id, tmp_path / "report", bootstrap=20)
        assert "\x00" not in paths.json.read_text(encoding="utf-8")
    finally:
        reference_db.dispose()
