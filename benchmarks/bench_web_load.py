"""Load on the web testbed: many testers chatting at once over HTTP on loopback.

    python benchmarks/bench_web_load.py                      # SQLite, then PostgreSQL
    python benchmarks/bench_web_load.py --backend sqlite --testers 100 --turns 10

Each simulated tester signs in, starts a session and sends its turns one after the other
through the same endpoint the chat page uses, all testers at once, against a demo
application that answers without waiting. Like a person, a tester reads the reply and
types the next message before sending it: a pause drawn uniformly from --think (seconds;
people typically take 10 s or more, so the default 1–3 s is a demanding pace). With
``--think 0 0`` every tester fires its next turn the moment the reply arrives, which
measures the server's throughput ceiling instead (latency is then queueing: testers ÷
throughput). The server (uvicorn, one process) runs in its own process. Reported per turn:

- round trip: the client's time from sending a message to having the reply;
- server overhead: the round trip minus the application's own time (as stored with each
  turn), i.e. everything the web testbed adds: HTTP, session and CSRF checks, the
  blinding layer, the database reads and the commit of the turn.

Then the record is checked: every turn stored once, in order, with no error turn.
PostgreSQL uses the server at $CORIX_TEST_PG_URL (default: postgres@127.0.0.1:5432) and a
scratch database that is dropped afterwards.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import aiohttp
from sqlalchemy import func, select

from _bench_support import demo_field_series, free_port, scratch_database_url, wait_until_listening
from corix.storage import Database
from corix.storage.orm import SessionRow, TurnRow
from corix.storage.orm_web import AssignmentRow
from corix.web import Role, WebSettings
from corix.web.app import create_app

PASSWORD = "load test passphrase"
# Cheap password hashing: sign-in is not what is measured, and 100 Argon2 hashes at the
# production cost would only slow the set-up down.
SETTINGS = WebSettings(secret_key="bench-web-load", password_time_cost=1, password_memory_kib=1024)
CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')
MESSAGES = [
    "Hi! I'm up to episode {n} of The Halloway Signal.",
    "Can you remind me what happened in episode {m}?",
    "Who is Maren Okafor?",
    "What did Tobias admit?",
    "What was the brass key for?",
]


@dataclass
class Result:
    turns: list[tuple[str, int, float]] = field(default_factory=list)  # token, index, rtt
    errors: list[str] = field(default_factory=list)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["sqlite", "postgres", "both"], default="both")
    parser.add_argument("--testers", type=int, default=100)
    parser.add_argument("--turns", type=int, default=10)
    parser.add_argument(
        "--think",
        type=float,
        nargs=2,
        default=(1.0, 3.0),
        metavar=("MIN", "MAX"),
        help="pause before each message, seconds",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--serve", help=argparse.SUPPRESS)  # internal: run the server
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        _serve(args.serve, args.port)
        return
    backends = ["sqlite", "postgres"] if args.backend == "both" else [args.backend]
    for backend in backends:
        with scratch_database_url(backend, "load") as url:
            _run(backend, url, args)


# -- the server process --------------------------------------------------------------------
def _serve(url: str, port: int) -> None:
    import uvicorn

    db = Database(url)
    uvicorn.run(
        create_app(db, settings=SETTINGS),
        host="127.0.0.1",
        port=port,
        log_level="warning",
        access_log=False,
    )


@contextmanager
def _server(url: str) -> Iterator[str]:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, __file__, "--serve", url, "--port", str(port)],
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until_listening(port, process, timeout_s=30)
        yield base
    finally:
        process.terminate()
        process.wait(timeout=30)


# -- set-up, load, checks ------------------------------------------------------------------
def _prepare(url: str, testers: int, turns: int) -> None:
    db = Database(url)
    state = create_app(db, settings=SETTINGS).state.corix
    evaluation = demo_field_series(state, "Load", turns=turns)
    ids = [
        state.accounts.create_user(f"tester{i:03d}", PASSWORD, Role.FIELD_TESTER).id
        for i in range(testers)
    ]
    state.assigner.assign_testers(evaluation, ids, per_tester=1, seed=0)
    db.dispose()


async def _tester(base: str, index: int, args: argparse.Namespace, result: Result) -> None:
    pause = random.Random(args.seed * 100_003 + index)
    jar = aiohttp.CookieJar(unsafe=True)  # cookies for 127.0.0.1
    async with aiohttp.ClientSession(base, cookie_jar=jar) as http:
        page = await (await http.get("/login")).text()
        await http.post(
            "/login",
            data={
                "username": f"tester{index:03d}",
                "password": PASSWORD,
                "csrf_token": _csrf(page),
            },
        )
        home = await (await http.get("/tester")).text()
        token = re.search(r'id="next-session" href="/tester/a/([^"/]+)', home)
        assert token, "no assignment"
        consent = await (await http.get(f"/tester/a/{token.group(1)}")).text()
        chat = await http.post(
            f"/tester/a/{token.group(1)}/start",
            data={"consent": "yes", "csrf_token": _csrf(consent)},
        )
        csrf = _csrf(await chat.text())
        for turn in range(args.turns):
            await asyncio.sleep(pause.uniform(*args.think))
            message = MESSAGES[turn % len(MESSAGES)].format(n=3 + index % 5, m=1 + turn % 3)
            started = time.perf_counter()
            async with http.post(
                f"/tester/a/{token.group(1)}/messages",
                data={"message": message, "turn": str(turn), "csrf_token": csrf},
                headers={"accept": "application/json"},
            ) as response:
                body = await response.json()
                elapsed = (time.perf_counter() - started) * 1000
                if response.status != 200 or body.get("failed"):
                    result.errors.append(f"{response.status}: {body}")
                    continue
            result.turns.append((token.group(1), turn, elapsed))


def _csrf(page: str) -> str:
    match = CSRF.search(page)
    assert match, "no CSRF token on the page"
    return match.group(1)


def _run(backend: str, url: str, args: argparse.Namespace) -> None:
    testers, turns = args.testers, args.turns
    _prepare(url, testers, turns)
    result = Result()
    with _server(url) as base:

        async def everyone() -> float:
            started = time.perf_counter()
            await asyncio.gather(*(_tester(base, i, args, result) for i in range(testers)))
            return time.perf_counter() - started

        wall = asyncio.run(everyone())
    db = Database(url)
    with db.session() as s:
        stored = {
            (token, idx): (latency, error)
            for token, idx, latency, error in s.execute(
                select(AssignmentRow.token, TurnRow.idx, TurnRow.latency_ms, TurnRow.error)
                .join(SessionRow, SessionRow.id == AssignmentRow.session_id)
                .join(TurnRow, TurnRow.session_id == SessionRow.id)
            )
        }
        total = s.scalar(select(func.count()).select_from(TurnRow)) or 0
    db.dispose()
    overheads = [
        rtt - stored[(token, idx)][0] for token, idx, rtt in result.turns if (token, idx) in stored
    ]
    round_trips = [rtt for _, _, rtt in result.turns]
    lost = len(result.turns) - sum((t, i) in stored for t, i, _ in result.turns)
    error_turns = sum(error is not None for _, error in stored.values())
    expected = testers * turns
    low, high = args.think
    print(
        f"\n== {backend}: {testers} testers × {turns} turns, thinking {low:g}–{high:g} s "
        "between turns, one server process =="
    )
    print(
        f"turns answered {len(result.turns)}/{expected}, stored {total}, lost {lost}, "
        f"request errors {len(result.errors)}, error turns {error_turns}"
    )
    print(f"wall {wall:.1f} s, {len(result.turns) / wall:.0f} turns/s")
    print(
        f"round trip       p50 {_pct(round_trips, 50):6.1f} ms  p95 {_pct(round_trips, 95):6.1f} ms"
        f"  max {max(round_trips):6.1f} ms"
    )
    print(
        f"server overhead  p50 {_pct(overheads, 50):6.1f} ms  p95 {_pct(overheads, 95):6.1f} ms"
        f"  max {max(overheads):6.1f} ms"
    )
    app_ms = [latency for latency, _ in stored.values()]
    print(f"application time p50 {statistics.median(app_ms):6.2f} ms")
    intact = not result.errors and lost == 0 and total == expected and error_turns == 0
    if high == 0:
        print(
            "throughput ceiling (no pauses): latency here is queueing, not overhead; "
            + ("record intact" if intact else "FAIL: errors or lost turns")
        )
    elif intact and _pct(overheads, 95) < 100:
        print("PASS: p95 server overhead under 100 ms, no errors, no lost turns")
    else:
        print("FAIL: p95 overhead must stay under 100 ms with no errors or lost turns")


def _pct(values: list[float], percentile: int) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(percentile / 100 * (len(ordered) - 1)))]


if __name__ == "__main__":
    main()
