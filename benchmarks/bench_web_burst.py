"""A real evaluation's start on the web testbed: everyone signs in within minutes, then chats.

    python benchmarks/bench_web_burst.py --workers 1
    python benchmarks/bench_web_burst.py --workers 2 --testers 1000 --sign-in-over 120

``--testers`` people sign in with real passwords at the production hashing cost (the
default :class:`~corix.web.WebSettings`), their sign-ins spread evenly over
``--sign-in-over`` seconds; each then opens the tester page and the session, consents, and
sends ``--turns`` messages with a pause of ``--think`` seconds before each (people read and
type). A sign-in answered "busy" (503, the hashing queue is full) is tried again after
its Retry-After, as a person would, up to five times. Meanwhile another visitor loads the
sign-in page every 0.2 s: what the burst does to everyone else. The server is
``corix serve``'s own (``--workers`` processes, one port) over PostgreSQL
(``$CORIX_TEST_PG_URL``, default postgres@127.0.0.1:5432, a scratch database dropped
afterwards), or SQLite with ``--backend sqlite``.

Reported: p50 / p95 / p99 per request type, twice: client round trips on loopback (the
server's time plus the client's own scheduling: the client's thousand testers share this
machine's two cores with the server), and the server's time from its ``Server-Timing``
header (request reaching the app to response start), which is what the issue's targets for
chat turns and pages measure; for chat turns also the server overhead, the round trip minus
the application's time stored with the turn. Then failed requests, the server processes'
CPU and peak memory (from /proc), and the record: every turn stored once.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import re
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp
from sqlalchemy import func, select

from _bench_support import demo_field_series, free_port, scratch_database_url, wait_until_listening
from corix.storage import Database
from corix.storage.orm import SessionRow, TurnRow
from corix.storage.orm_web import AssignmentRow
from corix.storage.web import accounts as account_store
from corix.storage.web import transaction
from corix.web import Role, ServeConfig, WebSettings
from corix.web.app import create_app
from corix.web.security import Passwords

PASSWORD = "burst test passphrase"
SETTINGS = WebSettings(secret_key="bench-web-burst")  # production hashing
CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')
NEXT = re.compile(r'id="next-session" href="/tester/a/([^"/]+)')
MESSAGES = ["Hi! I'm up to episode 3.", "Who is Maren Okafor?", "What did Tobias admit?"]
BUSY_RETRIES = 5
# Sign-ins are judged as people feel them (round trip); chat and pages by the server's time.
ROUND_TRIP_TARGETS_MS = {"sign-in": 3000, "sign-in page (others)": 300}
SERVER_TARGETS_MS = {"chat turn": 100, "page": 100}
SERVER_TIMING = re.compile(r"app;dur=([0-9.]+)")


@dataclass
class Timings:
    by_kind: defaultdict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    server_by_kind: defaultdict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    overhead: list[float] = field(default_factory=list)
    turns: list[tuple[str, int, float]] = field(default_factory=list)
    errors: defaultdict[str, int] = field(default_factory=lambda: defaultdict(int))
    error_samples: list[str] = field(default_factory=list)
    busy: int = 0
    """Sign-ins answered "busy, try again in a few seconds" (and tried again)."""

    def failed(self, kind: str, what: str) -> None:
        self.errors[kind] += 1
        if len(self.error_samples) < 5:
            self.error_samples.append(f"{kind}: {what}"[:300])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["sqlite", "postgres"], default="postgres")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--testers", type=int, default=1000)
    parser.add_argument("--sign-in-over", type=float, default=120.0)
    parser.add_argument("--turns", type=int, default=3)
    parser.add_argument("--think", type=float, nargs=2, default=(2.0, 10.0))
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    with scratch_database_url(args.backend, "burst") as url:
        _prepare(url, args.testers, args.turns)
        with _server(url, args.workers) as (base, server_pid):
            sampler = _Sampler(server_pid)
            timings = Timings()
            wall = asyncio.run(_everyone(base, args, timings, sampler))
            cpu_s, peak_mib = sampler.result()
        _report(url, args, timings, wall, cpu_s, peak_mib)


# -- set-up --------------------------------------------------------------------------------
def _prepare(url: str, testers: int, turns: int) -> None:
    db = Database(url)
    state = create_app(db, settings=SETTINGS).state.corix
    evaluation = demo_field_series(state, "Burst", turns=turns)
    # One production-cost hash for everyone: the server checks each sign-in in full, and
    # the set-up need not spend minutes hashing the same password a thousand times.
    stored = Passwords(
        time_cost=SETTINGS.password_time_cost,
        memory_kib=SETTINGS.password_memory_kib,
        lanes=SETTINGS.password_lanes,
    ).hash(PASSWORD)
    with transaction(db) as tx:
        ids = [
            account_store.add_user(tx, _name(i), stored, Role.FIELD_TESTER.value).id
            for i in range(testers)
        ]
    state.assigner.assign_testers(evaluation, ids, per_tester=1, seed=0)
    db.dispose()


def _name(index: int) -> str:
    return f"tester{index:05d}"


@contextmanager
def _server(url: str, workers: int) -> Iterator[tuple[str, int]]:
    """``corix serve``'s own entry (uvicorn, ``workers`` processes) in a process of its own."""
    port = free_port()
    config = ServeConfig(database_url=url, settings=SETTINGS).model_dump_json()
    code = (
        "import os, sys; from corix.web import ServeConfig, serve; "
        "serve(ServeConfig.model_validate_json(os.environ['BURST_CONFIG']), "
        f"host='127.0.0.1', port={port}, workers={workers})"
    )
    process = subprocess.Popen(
        [sys.executable, "-c", code], env={**os.environ, "BURST_CONFIG": config}
    )
    try:
        wait_until_listening(port, process, timeout_s=120)
        time.sleep(2 if workers > 1 else 0)  # every worker up, not only the first
        yield f"http://127.0.0.1:{port}", process.pid
    finally:
        process.terminate()
        process.wait(timeout=60)


# -- the server's CPU and memory, from /proc -----------------------------------------------
class _Sampler:
    """The server process and its workers: CPU seconds used during the load, peak RSS."""

    def __init__(self, root: int) -> None:
        self._root = root
        self._peak_kib = 0
        self._cpu_start = self._cpu()

    def _tree(self) -> list[int]:
        children: defaultdict[int, list[int]] = defaultdict(list)
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    stat = Path(f"/proc/{entry}/stat").read_text()
                except OSError:
                    continue
                ppid = int(stat.rsplit(")", 1)[1].split()[1])
                children[ppid].append(int(entry))
        found, todo = [], [self._root]
        while todo:
            pid = todo.pop()
            found.append(pid)
            todo.extend(children.get(pid, []))
        return found

    def _cpu(self) -> float:
        ticks = 0
        for pid in self._tree():
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            ticks += int(fields[11]) + int(fields[12])  # utime + stime
        return ticks / os.sysconf("SC_CLK_TCK")

    def sample(self) -> None:
        total = 0
        for pid in self._tree():
            try:
                status = Path(f"/proc/{pid}/status").read_text()
            except OSError:
                continue
            match = re.search(r"VmRSS:\s+(\d+) kB", status)
            total += int(match.group(1)) if match else 0
        self._peak_kib = max(self._peak_kib, total)

    def result(self) -> tuple[float, float]:
        return self._cpu() - self._cpu_start, self._peak_kib / 1024


# -- the load ------------------------------------------------------------------------------
async def _everyone(
    base: str, args: argparse.Namespace, timings: Timings, sampler: _Sampler
) -> float:
    done = asyncio.Event()

    async def sample() -> None:
        while not done.is_set():
            sampler.sample()
            await asyncio.sleep(0.5)

    connector = aiohttp.TCPConnector(limit=0)
    timeout = aiohttp.ClientTimeout(total=60)
    async with aiohttp.ClientSession(base, connector=connector, timeout=timeout) as shared:
        sampling = asyncio.create_task(sample())
        others = asyncio.create_task(_other_visitor(shared, args.sign_in_over, timings))
        started = time.perf_counter()
        spacing = args.sign_in_over / max(1, args.testers)
        await asyncio.gather(
            *(_tester(base, i, i * spacing, args, timings) for i in range(args.testers))
        )
        wall = time.perf_counter() - started
        done.set()
        await others
        await sampling
    return wall


async def _timed(timings: Timings, kind: str, request: object) -> tuple[int, str] | None:
    started = time.perf_counter()
    try:
        async with request as response:  # type: ignore[attr-defined]
            body = await response.text()
            status = response.status
            server_timing = SERVER_TIMING.search(response.headers.get("server-timing", ""))
    except (aiohttp.ClientError, TimeoutError) as exc:
        timings.failed(kind, f"{type(exc).__name__}: {exc}")
        return None
    elapsed = (time.perf_counter() - started) * 1000
    if status >= 400:
        timings.failed(kind, f"{status}: {body[:200]}")
        return None
    timings.by_kind[kind].append(elapsed)
    if server_timing is not None:
        timings.server_by_kind[kind].append(float(server_timing.group(1)))
    return status, body


async def _other_visitor(http: aiohttp.ClientSession, seconds: float, timings: Timings) -> None:
    """Someone else loading the sign-in page while the burst is hashed."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        await _timed(timings, "sign-in page (others)", http.get("/login"))
        await asyncio.sleep(0.2)


async def _tester(
    base: str, index: int, start_at: float, args: argparse.Namespace, timings: Timings
) -> None:
    await asyncio.sleep(start_at)
    pause = random.Random(args.seed * 100_003 + index)
    jar = aiohttp.CookieJar(unsafe=True)  # cookies for 127.0.0.1
    timeout = aiohttp.ClientTimeout(total=60)
    async with aiohttp.ClientSession(base, cookie_jar=jar, timeout=timeout) as http:
        got = await _timed(timings, "page", http.get("/login"))
        if got is None:
            return
        form = {"username": _name(index), "password": PASSWORD, "csrf_token": _csrf(got[1])}
        for _attempt in range(BUSY_RETRIES + 1):
            started = time.perf_counter()
            try:
                async with http.post("/login", data=form, allow_redirects=False) as response:
                    await response.read()
                    status = response.status
                    retry_after = float(response.headers.get("retry-after", "5"))
            except (aiohttp.ClientError, TimeoutError) as exc:
                timings.failed("sign-in", f"{type(exc).__name__}: {exc}")
                return
            timings.by_kind["sign-in"].append((time.perf_counter() - started) * 1000)
            if status != 503:
                break
            timings.busy += 1  # as a person would: wait as asked, then sign in again
            await asyncio.sleep(retry_after)
        if status != 303:
            timings.failed("sign-in", f"{status}: not signed in")
            return
        got = await _timed(timings, "page", http.get("/tester"))
        if got is None:
            return
        match = NEXT.search(got[1])
        if match is None:
            timings.failed("page", "no assignment on the tester's page")
            return
        token = match.group(1)
        got = await _timed(timings, "page", http.get(f"/tester/a/{token}"))
        if got is None:
            return
        form = {"consent": "yes", "csrf_token": _csrf(got[1])}
        got = await _timed(
            timings,
            "page",
            http.post(f"/tester/a/{token}/start", data=form, allow_redirects=False),
        )
        if got is None:
            return
        got = await _timed(timings, "page", http.get(f"/tester/a/{token}/chat"))
        if got is None:
            return
        csrf = _csrf(got[1])
        for turn in range(args.turns):
            await asyncio.sleep(pause.uniform(*args.think))
            form = {
                "message": MESSAGES[turn % len(MESSAGES)],
                "turn": str(turn),
                "csrf_token": csrf,
            }
            started = time.perf_counter()
            got = await _timed(
                timings,
                "chat turn",
                http.post(
                    f"/tester/a/{token}/messages",
                    data=form,
                    headers={"accept": "application/json"},
                ),
            )
            if got is not None:
                timings.turns.append((token, turn, (time.perf_counter() - started) * 1000))


def _csrf(page: str) -> str:
    match = CSRF.search(page)
    return match.group(1) if match else ""


# -- the report ----------------------------------------------------------------------------
def _report(
    url: str,
    args: argparse.Namespace,
    timings: Timings,
    wall: float,
    cpu_s: float,
    peak_mib: float,
) -> None:
    db = Database(url, run_migrations=False)
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
    overheads = [rtt - stored[(t, i)][0] for t, i, rtt in timings.turns if (t, i) in stored]
    expected = args.testers * args.turns
    error_turns = sum(error is not None for _, error in stored.values())
    print(
        f"\n== {args.backend}, {args.workers} server process(es): {args.testers} testers "
        f"signing in over {args.sign_in_over:g} s, {args.turns} turns each, thinking "
        f"{args.think[0]:g}–{args.think[1]:g} s =="
    )
    print(f"wall {wall:.0f} s; server CPU {cpu_s:.0f} s; server peak RSS {peak_mib:.0f} MiB")
    round_trips = [*timings.by_kind.items(), ("chat turn: overhead", overheads)]
    _table("round trip, ms", round_trips, ROUND_TRIP_TARGETS_MS)
    _table("server time, ms", list(timings.server_by_kind.items()), SERVER_TARGETS_MS)
    print(f"sign-ins answered busy and tried again: {timings.busy}")
    print(f"failed requests: {dict(timings.errors) or 0}")
    for sample in timings.error_samples:
        print(f"  e.g. {sample}")
    print(
        f"turns: answered {len(timings.turns)}/{expected}, stored {total} "
        f"(distinct {len(stored)}), error turns {error_turns}"
    )


def _table(title: str, rows: list[tuple[str, list[float]]], targets: dict[str, int]) -> None:
    print(f"{title:24} {'n':>6} {'p50':>8} {'p95':>8} {'p99':>8} {'max':>8}  target p95")
    for kind, values in sorted(rows):
        if not values:
            continue
        target = targets.get(kind)
        print(
            f"  {kind:22} {len(values):6} {_pct(values, 50):8.1f} {_pct(values, 95):8.1f} "
            f"{_pct(values, 99):8.1f} {max(values):8.1f}  {f'< {target} ms' if target else ''}"
        )


def _pct(values: list[float], percentile: int) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(percentile / 100 * (len(ordered) - 1)))]


if __name__ == "__main__":
    main()
