"""ARIA submissions: isolation of sibling modules, state per session, failures as errors."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from corix.apps import ApplicationError, build_application
from corix.apps.aria import AriaSubmission
from corix.errors import CorixError

SUBMISSIONS = Path(__file__).parent / "submissions"


async def _converse(app: AriaSubmission, texts: list[str]) -> list[str | None]:
    session = await app.start_session()
    replies = [await session.respond(t) for t in texts]
    await session.end()
    return [r.text if r.ok else r.error for r in replies]


async def test_two_submissions_keep_their_own_sibling_modules() -> None:
    a = AriaSubmission(SUBMISSIONS / "team_a")
    b = AriaSubmission(SUBMISSIONS / "team_b")
    await a.open({"key": "k1"})
    await b.open()
    assert (await _converse(a, ["hi"]))[0] == "A says #1 (k1): hi"
    assert (await _converse(b, ["hi"]))[0] == "B says 1"
    # Nothing from the submissions leaks into the process-wide module table.
    assert "utils" not in sys.modules and "aria_dialog_api_base" not in sys.modules
    await a.close()
    await b.close()


async def test_corix_provides_the_base_class_when_missing() -> None:
    app = AriaSubmission(SUBMISSIONS / "team_b")
    base = app._team_class.__mro__[1]
    assert base.__module__ == "corix.apps.aria_base"
    team_a = AriaSubmission(SUBMISSIONS / "team_a")
    assert getattr(team_a._team_class, "shipped_by_team", False) is True
    await app.close()
    await team_a.close()


async def test_each_session_gets_its_own_instance_and_state() -> None:
    app = build_application(f"aria:{SUBMISSIONS / 'team_a'}")
    await app.open({"key": "x"})
    assert await app.version() == "team-a 1.0"
    first, second = await asyncio.gather(
        _converse(app, ["a", "b"]),
        _converse(app, ["c"]),  # type: ignore[arg-type]
    )
    assert first == ["A says #1 (x): a", "A says #2 (x): b"]
    assert second == ["A says #1 (x): c"]
    await app.close()


async def test_auth_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARIA_AUTH_JSON", '{"key": "from-env"}')
    app = AriaSubmission(SUBMISSIONS / "team_a")
    await app.open()
    assert (await _converse(app, ["q"]))[0] == "A says #1 (from-env): q"
    await app.close()


async def test_misbehaving_submission_yields_error_replies_not_crashes() -> None:
    app = AriaSubmission(SUBMISSIONS / "flaky", timeout_s=0.3)
    await app.open()
    replies = await _converse(app, ["refuse", "raise", "shape", "ok", "hang", "ok"])
    assert replies[0] == "GetResponse reported success=False: quota exceeded"
    assert replies[1] == "GetResponse raised RuntimeError: backend down"
    assert replies[2] == "GetResponse returned str, expected a dict"
    assert replies[3] == "fine"
    assert replies[4] == "GetResponse timed out after 0.3s"
    assert replies[5] is not None and replies[5].startswith("session abandoned")
    await app.close()


def test_a_directory_without_a_team_module_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(CorixError, match=r"aria_dialog_api_team\.py is missing"):
        AriaSubmission(tmp_path)


def test_unknown_adapter_kind_lists_known_kinds() -> None:
    with pytest.raises(CorixError) as info:
        build_application("ariaa:./x")
    assert "Did you mean 'aria'?" in str(info.value)
    assert "openai" in str(info.value) and "demo" in str(info.value)


async def _concurrent_dialogues(spec: str) -> list[str | None]:
    app = build_application(spec)
    await app.open({})

    async def one(n: int) -> list[str | None]:
        async with app.session_slot():
            session = await app.start_session()
            replies = [await session.respond(f"{n}-{t}") for t in range(3)]
            await session.end()
        return [r.text if r.ok else r.error for r in replies]

    try:
        dialogues = await asyncio.gather(*(one(n) for n in range(6)))
    finally:
        await app.close()
    return [reply for dialogue in dialogues for reply in dialogue]


async def test_a_submission_that_shares_state_runs_one_session_at_a_time() -> None:
    replies = await _concurrent_dialogues(f"aria:{SUBMISSIONS / 'shared_state'}")
    assert all(reply is not None and reply.startswith("ok:") for reply in replies)


async def test_declared_concurrency_that_breaks_a_submission_says_why() -> None:
    replies = await _concurrent_dialogues(f"aria:{SUBMISSIONS / 'shared_state'}?sessions=6")
    failed = [reply for reply in replies if reply is not None and not reply.startswith("ok:")]
    assert failed, "six dialogues at once clobber the shared state"
    assert all("may share state; run it with sessions=1" in reply for reply in failed)


async def _session_starts(spec: str, n: int = 6) -> list[str]:
    """Per dialogue: "ok" when all three turns were answered, else why its start failed."""
    app = build_application(spec)
    await app.open({})

    async def one(k: int) -> str:
        async with app.session_slot():
            try:
                session = await app.start_session()
            except ApplicationError as exc:
                return str(exc)
            replies = [await session.respond(f"{k}-{t}") for t in range(3)]
            await session.end()
        return "ok" if all(reply.ok for reply in replies) else "failed turn"

    try:
        return list(await asyncio.gather(*(one(k) for k in range(n))))
    finally:
        await app.close()


async def test_a_singleton_that_keeps_history_fails_every_session_after_the_first() -> None:
    outcomes = await _session_starts(f"aria:{SUBMISSIONS / 'singleton'}")
    assert outcomes[0] == "ok"
    assert all("an earlier session used, still holding the history" in o for o in outcomes[1:])


async def test_a_singleton_declared_safe_for_parallel_sessions_is_caught() -> None:
    outcomes = await _session_starts(f"aria:{SUBMISSIONS / 'singleton'}?sessions=3")
    assert outcomes.count("ok") == 1
    assert any("another open session is using" in o for o in outcomes)


async def test_a_singleton_that_clears_its_history_runs_one_session_at_a_time() -> None:
    spec = f"aria:{SUBMISSIONS / 'singleton_reset'}"
    assert await _session_starts(spec) == ["ok"] * 6
    parallel = await _session_starts(spec + "?sessions=3")
    assert any("another open session is using" in o for o in parallel)
