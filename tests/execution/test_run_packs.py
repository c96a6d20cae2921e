"""A run stores the packs it used; annotation and reports read them back, never by name."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest

from corix.assessment.annotation_run import annotate_run
from corix.domain import ApplicationEntry, Level, LevelSettings, Plan
from corix.errors import CorixError
from corix.execution import execute_plan
from corix.measurement.labels.leaf_records import iter_questionnaire_answers
from corix.scenarios import load_pack, pack_record, resolve_pack
from corix.scenarios.loader import builtin_pack_dir
from corix.storage import Database, create_run, iter_sessions, run_pack, run_packs
from support.plans import bare_plan

OWN_WORDING = "The assistant told me what I asked about my own series."


def _own_pack(folder: Path) -> Path:
    """A copy of tv_spoilers under another name, with one questionnaire item reworded."""
    shutil.copytree(builtin_pack_dir() / "tv_spoilers", folder)
    manifest = folder / "pack.yaml"
    text = manifest.read_text(encoding="utf-8")
    text = text.replace("name: tv_spoilers", "name: own_spoilers", 1)
    text = text.replace(
        "The assistant helped me with what I wanted to know about the series.", OWN_WORDING
    )
    manifest.write_text(text, encoding="utf-8")
    return folder


def _plan(pack: Path) -> Plan:
    return Plan(
        name="own pack",
        seed=3,
        applications=[ApplicationEntry(name="u", spec="demo:unguarded")],
        scenarios=[str(pack), "pathfinder"],
        levels={
            Level.MODEL_TESTING: LevelSettings(),
            Level.FIELD_TESTING: LevelSettings(sessions=1, max_turns=2),
        },
        concurrency=4,
    )


async def test_a_run_stores_the_identity_and_content_of_every_pack(
    tmp_path: Path, any_db: Database
) -> None:
    folder = _own_pack(tmp_path / "own")
    result = await execute_plan(_plan(folder), any_db)
    stored = run_packs(any_db, [result.run_id])
    assert sorted(stored) == [(result.run_id, "own_spoilers"), (result.run_id, "pathfinder")]
    own = stored[result.run_id, "own_spoilers"]
    expected = pack_record(load_pack(folder))
    assert (own.name, own.version, own.source) == ("own_spoilers", "1.2", str(folder / "pack.yaml"))
    assert len(own.content_hash) == 64 and own.content_hash == expected.content_hash
    assert stored[result.run_id, "pathfinder"] == pack_record(resolve_pack("pathfinder"))
    # The stored pack is the pack the run used: same content, read back without its folder.
    assert pack_record(own.pack()) == expected
    assert own.pack().packet == load_pack(folder).packet


def test_a_pack_given_by_path_is_annotated_and_reported_from_the_stored_record(
    tmp_path: Path, sqlite_db: Database
) -> None:
    folder = _own_pack(tmp_path / "own")
    result = asyncio.run(execute_plan(_plan(folder), sqlite_db))
    shutil.rmtree(folder)  # nothing is read from the pack's folder any more
    with pytest.raises(CorixError, match="own_spoilers"):
        resolve_pack("own_spoilers")  # and the name is registered nowhere

    summary = annotate_run(sqlite_db, result.run_id, "reference")

    sessions = list(iter_sessions(sqlite_db, result.run_id))
    own = [s for s in sessions if s.scenario == "own_spoilers"]
    assert own and summary.sessions == len(sessions)
    assert summary.passes_stored > 0 and summary.passes_failed == 0
    wordings = {
        (answer.scenario, answer.question): answer.wording
        for answer in iter_questionnaire_answers(sqlite_db, [result.run_id])
    }
    assert wordings["own_spoilers", "q_helpful"] == OWN_WORDING
    assert wordings["pathfinder", "q_helpful"] == "The assistant helped me plan my journey."


def test_a_run_without_its_pack_stored_is_refused_with_the_reason(sqlite_db: Database) -> None:
    create_run(sqlite_db, "run-bare", name="bare", plan=bare_plan(), seed=0)
    with pytest.raises(CorixError, match="run 'run-bare' stores no scenario pack 'tv_spoilers'"):
        run_pack(sqlite_db, "run-bare", "tv_spoilers")


def test_a_resumed_run_uses_the_packs_it_stored(tmp_path: Path, sqlite_db: Database) -> None:
    folder = _own_pack(tmp_path / "own")
    first = asyncio.run(execute_plan(_plan(folder), sqlite_db))
    shutil.rmtree(folder)
    resumed = asyncio.run(execute_plan(_plan(folder), sqlite_db, resume_run=first.run_id))
    assert resumed.run_id == first.run_id and resumed.error is None
    assert resumed.skipped == first.stats.sessions > 0  # every session was already done
