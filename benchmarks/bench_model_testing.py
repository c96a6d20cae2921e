"""Model testing end to end against the mock server: wall time, slots in use, CPU per call,
memory, beside a bare aiohttp client in the same run.

    python benchmarks/bench_model_testing.py --sessions 2000 --concurrency 50
    python benchmarks/bench_model_testing.py --sessions 5000 --turns 5 --concurrency 1000 \\
        --latency-ms 1000 --cli
    python benchmarks/bench_model_testing.py --sessions 1000 --turns 5 --rounds 3

Runs model-testing sessions (``--turns`` scripted prompts each) of an OpenAI-compatible
application served by the mock server (another process), persisted to a fresh SQLite
file, through the same ``execute_plan`` as ``corix run``; with ``--cli``, the same plan
also through ``corix run`` in a child process (start-up included). The application's
endpoint is held at ``--concurrency`` (``adaptive_concurrency=false``): the workload is
an endpoint declared to sustain that many, so every slot should hold a request.

Each run reports its wall time against the latency-bound ideal (calls × latency ÷
concurrency), the requests in flight at the mock server (steady part and overall, as a
share of the bound: see ``_bench_support.slot_occupancy``), its CPU milliseconds per model
call and peak RSS. The same conversations at the same concurrency, made by a bare aiohttp
client (one session, one semaphore, ``json.dumps`` and ``json.loads``; each request
carrying the conversation so far, as corix's do), give the floor that corix's CPU per
call is compared with; it runs twice, with Python's collector
as it is set by default and as a corix run sets it (``collected_sparingly``), as the
collector's share differs between them. Each row also reports the CPU its collections
took per call (``gc``). Before measuring, a run of 20 sessions
loads what a process loads once (corix's layers, its plugins), as the bare client's
aiohttp is imported before it is measured; ``--cold`` counts that start-up in corix's
CPU per call instead, and the ``corix run`` row always includes it. ``--scale`` first
runs 10× fewer sessions and then 10× more, to show that memory stays flat as the run
grows. ``--rounds N`` runs corix and the bare client in turn N times and reports the
medians, each ratio taken within its round: on a shared machine the speed drifts by tens
of percent between runs minutes apart.

``--floor`` adds a run to each round: corix with its HTTP client replaced by a
transport that answers every request with the mock server's reply after the same latency
(no aiohttp, no JSON). Its CPU per call is the work corix adds to each call — the client
layer's bookkeeping, the dialogue's records and models, the writer, the pack and the plan
— and bounds what the end-to-end ratio can reach: corix making the same requests with the
same collector cannot spend less than the bare client's run with that collector plus
this work, so ``(aiohttp¹ + own) ÷ aiohttp`` is the lowest ratio corix could show while
its own work per call is what it is.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Coroutine
from dataclasses import dataclass
from pathlib import Path
from statistics import median
from unittest import mock

import aiohttp
import yaml

from _bench_support import (
    SlotOccupancy,
    add_run_shape,
    mock_server_process,
    mock_stats,
    run_sizes,
    slot_occupancy,
)
from corix.domain import ApplicationEntry, EndpointConfig, Level, LevelSettings, Plan
from corix.execution import execute_plan
from corix.execution.collector import collected_sparingly
from corix.llm.http_transport import HTTPConnections
from corix.llm.models import ChatRequest
from corix.llm.transport import RawCompletion, Transport
from corix.scenarios.loader import builtin_pack_dir
from corix.storage import Database, run_totals


class CollectorTime:
    """The CPU seconds Python's cyclic collector took, in the thread it ran in."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self._started = 0.0
        gc.callbacks.append(self._on_collection)

    def _on_collection(self, phase: str, _info: dict[str, int]) -> None:
        if phase == "start":
            self._started = time.thread_time()
        else:
            self.seconds += time.thread_time() - self._started


COLLECTOR = CollectorTime()


BARE_LABELS = ("aiohttp", "aiohttp¹")
PROMPT = "Question {n}, turn {turn}: how do I get from Brackenford to Millhaven?"
"""Each scripted turn's prompt; the bare client asks the same."""


def scripted_pack(directory: Path, sessions: int, turns: int) -> Path:
    """A copy of the Pathfinder pack whose model tests are ``sessions`` scripts of
    ``turns`` prompts each."""
    pack_dir = directory / "bench_pack"
    shutil.copytree(builtin_pack_dir() / "pathfinder", pack_dir)
    manifest_path = pack_dir / "pack.yaml"
    manifest = yaml.safe_load(manifest_path.read_text(encoding="utf-8"))
    manifest["name"] = "bench_pathfinder"
    manifest["model_testing"] = {
        "scripts": [
            {
                "id": "ask",
                "probe": "capability",
                "description": f"{turns} questions per session.",
                "turns": [PROMPT.format(n="{{ n }}", turn=turn + 1) for turn in range(turns)],
                "parameters": {"grid": {"n": list(range(sessions))}},
            }
        ]
    }
    manifest_path.write_text(yaml.safe_dump(manifest, sort_keys=False), encoding="utf-8")
    return pack_dir


def bench_plan(base_url: str, pack: Path, concurrency: int) -> Plan:
    """Every script once against the mock application, its endpoint held at the bound."""
    options = f"model=corix-mock&max_concurrency={concurrency}&adaptive_concurrency=false"
    return Plan(
        name="bench",
        applications=[
            ApplicationEntry(name="mock-app", spec=f"openai:{base_url}?{options}&max_retries=0")
        ],
        scenarios=[str(pack)],
        levels={Level.MODEL_TESTING: LevelSettings()},
        concurrency=concurrency,
    )


async def run_plan(plan: Plan, db_url: str) -> tuple[float, float]:
    """Run ``plan`` in this process: wall and CPU seconds."""
    db = Database(db_url)
    cpu0, wall0 = time.process_time(), time.perf_counter()
    result = await execute_plan(plan, db)
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    counts = run_totals(db, result.run_id)
    db.dispose()
    assert result.status == "complete" and counts.error_turns == 0, (result.status, counts)
    return wall, cpu


def run_cli(plan: Plan, workdir: Path) -> tuple[float, float, float]:
    """Run ``plan`` through ``corix run`` in a child process: wall and CPU seconds, and the
    child's peak RSS in MiB."""
    plan_file = workdir / "plan.yaml"
    plan_file.write_text(yaml.safe_dump(plan.model_dump(mode="json")), encoding="utf-8")
    env = {**os.environ, "CORIX_DB": f"sqlite:///{workdir / 'cli.db'}"}
    command = [
        sys.executable,
        "-c",
        "from corix.cli.main import main; main()",
        "run",
        str(plan_file),
    ]
    wall0 = time.perf_counter()
    _pid, status, usage = os.wait4(subprocess.Popen(command, env=env).pid, 0)
    wall = time.perf_counter() - wall0
    assert os.waitstatus_to_exitcode(status) == 0, f"corix run exited with {status}"
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


async def bare_client(
    base_url: str, sessions: int, turns: int, concurrency: int
) -> tuple[float, float]:
    """``sessions`` conversations of ``turns`` chat requests, ``concurrency`` at once, with
    nothing but aiohttp: each request carries the conversation so far, as corix's do (the
    same prompts), so the two make the same bodies. Wall and CPU seconds."""
    connector = aiohttp.TCPConnector(limit=concurrency)
    slots = asyncio.Semaphore(concurrency)
    url = f"{base_url}/chat/completions"

    async def converse(session: aiohttp.ClientSession, number: int) -> None:
        messages: list[dict[str, str]] = []
        async with slots:
            for turn in range(turns):
                messages.append({"role": "user", "content": PROMPT.format(n=number, turn=turn + 1)})
                body = json.dumps({"model": "corix-mock", "messages": messages}).encode()
                async with session.post(url, data=body) as response:
                    reply = json.loads(await response.read())
                content = reply["choices"][0]["message"]["content"]
                assert content
                messages.append({"role": "assistant", "content": content})

    async with aiohttp.ClientSession(connector=connector) as session:
        cpu0, wall0 = time.process_time(), time.perf_counter()
        await asyncio.gather(*(converse(session, number) for number in range(sessions)))
        return time.perf_counter() - wall0, time.process_time() - cpu0


class CannedTransport:
    """Answers every request with one reply after ``latency_s``: the HTTP leg taken out."""

    def __init__(self, reply: RawCompletion, latency_s: float) -> None:
        self._reply = reply
        self._latency_s = latency_s

    async def send(
        self, _request: ChatRequest, _endpoint: EndpointConfig, _timeout: float
    ) -> RawCompletion:
        await asyncio.sleep(self._latency_s)
        return self._reply

    async def aclose(self) -> None:
        """Nothing to release."""


def mock_reply(base_url: str) -> RawCompletion:
    """What the mock server answers to the benchmark's first prompt, as a transport reads it."""
    request = urllib.request.Request(
        f"{base_url}/chat/completions",
        data=json.dumps(
            {"model": "corix-mock", "messages": [{"role": "user", "content": PROMPT}]}
        ).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request) as response:
        reply = json.load(response)
    return RawCompletion(
        text=reply["choices"][0]["message"]["content"],
        model=reply["model"],
        prompt_tokens=reply["usage"]["prompt_tokens"],
        completion_tokens=reply["usage"]["completion_tokens"],
        finish_reason=reply["choices"][0]["finish_reason"],
    )


def without_http(
    reply: RawCompletion, latency_s: float
) -> contextlib.AbstractContextManager[object]:
    """Every client corix makes meanwhile answers through a :class:`CannedTransport`."""

    def canned(_endpoint: EndpointConfig, _connections: HTTPConnections | None) -> Transport:
        return CannedTransport(reply, latency_s)

    return mock.patch("corix.llm.client._default_transport", canned)


def warm_up(base_url: str, concurrency: int) -> float:
    """Run 20 single-turn sessions, unmeasured but for their CPU seconds, returned: what a
    process does once (importing the layers a run uses, registering plugins) is done."""
    with tempfile.TemporaryDirectory() as tmp:
        plan = bench_plan(base_url, scripted_pack(Path(tmp), 20, 1), concurrency)
        _wall, cpu = asyncio.run(run_plan(plan, f"sqlite:///{Path(tmp) / 'warm.db'}"))
    return cpu


def report(
    label: str,
    calls: int,
    ideal: float,
    run: tuple[float, float, float | None],
    slots: SlotOccupancy | None,
) -> float:
    """Print one run's figures (wall, CPU and, when known, collector seconds and the slots
    in use at the mock server); its CPU milliseconds per call."""
    wall, cpu, collector = run
    per_call = cpu * 1000 / calls
    gc_part = "" if collector is None else f" (gc {collector * 1000 / calls:.3f}ms)"
    print(
        f"  {label:9} wall={wall:.2f}s ratio={wall / ideal:.2f} "
        f"cpu/call={per_call:.3f}ms{gc_part} {slots.describe() if slots else ''}",
        flush=True,
    )
    return per_call


def measured(run: Coroutine[None, None, tuple[float, float]]) -> tuple[float, float, float]:
    """``run``'s wall and CPU seconds, and the seconds the collector took meanwhile."""
    before = COLLECTOR.seconds
    wall, cpu = asyncio.run(run)
    return wall, cpu, COLLECTOR.seconds - before


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_run_shape(parser)
    parser.add_argument("--cli", action="store_true", help="also run the plan via corix run")
    parser.add_argument("--scale", action="store_true", help="also run at sessions ÷10 and ×10")
    parser.add_argument(
        "--cold", action="store_true", help="no warm-up: count corix's start-up per call"
    )
    parser.add_argument(
        "--rounds", type=int, default=1, help="corix and the bare client this many times, in turn"
    )
    parser.add_argument(
        "--floor", action="store_true", help="also corix without its HTTP leg: the work it adds"
    )
    args = parser.parse_args()
    with mock_server_process(args.latency_ms) as base_url:
        if not args.cold:
            cpu = warm_up(base_url, args.concurrency)
            print(f"warm-up: 20 sessions, {cpu:.2f}s CPU (start-up, not counted)", flush=True)
        for sessions in run_sizes(args.sessions, args.scale):
            workload = Workload(sessions, args.turns, args.concurrency, args.latency_ms / 1000)
            print(workload.describe(), flush=True)
            rounds = [
                one_round(base_url, workload, cli=args.cli, floor=args.floor)
                for _ in range(args.rounds)
            ]
            if args.rounds > 1:
                summarise(rounds)
            print("  ¹ the collector set as in a corix run (collected_sparingly)", flush=True)


@dataclass(frozen=True)
class Workload:
    sessions: int
    turns: int
    concurrency: int
    latency_s: float

    @property
    def calls(self) -> int:
        return self.sessions * self.turns

    @property
    def ideal_s(self) -> float:
        return self.calls * self.latency_s / self.concurrency

    def describe(self) -> str:
        return (
            f"sessions={self.sessions} turns={self.turns} calls={self.calls} "
            f"concurrency={self.concurrency} latency={self.latency_s * 1000:g}ms "
            f"ideal={self.ideal_s:.2f}s"
        )


def one_round(base_url: str, workload: Workload, *, cli: bool, floor: bool) -> dict[str, float]:
    """corix in this process (and with ``cli`` through ``corix run``, with ``floor`` without
    its HTTP leg), then the bare client with each collector setting: each one's CPU
    milliseconds per call, by label."""
    calls, ideal, latency_s = workload.calls, workload.ideal_s, workload.latency_s
    window = {"ramp_s": latency_s, "drain_s": workload.turns * latency_s}
    per_call: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        pack = scripted_pack(Path(tmp), workload.sessions, workload.turns)
        plan = bench_plan(base_url, pack, workload.concurrency)
        before = mock_stats(base_url)
        run = measured(run_plan(plan, f"sqlite:///{Path(tmp) / 'bench.db'}"))
        slots = slot_occupancy(before, mock_stats(base_url), workload.concurrency, **window)
        per_call["corix"] = report("corix", calls, ideal, run, slots)
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"  {'':9} peak RSS {rss:.0f} MiB (this process so far)", flush=True)
        if cli:
            before = mock_stats(base_url)
            wall, cpu, rss = run_cli(plan, Path(tmp))
            slots = slot_occupancy(before, mock_stats(base_url), workload.concurrency, **window)
            report("corix run", calls, ideal, (wall, cpu, None), slots)
            print(f"  {'':9} peak RSS {rss:.0f} MiB (start-up included)", flush=True)
        if floor:
            with without_http(mock_reply(base_url), latency_s):
                run = measured(run_plan(plan, f"sqlite:///{Path(tmp) / 'own.db'}"))
            per_call["own"] = report("own", calls, ideal, run, None)
    one_call = {"ramp_s": latency_s, "drain_s": latency_s}
    for label, collector in (
        ("aiohttp", contextlib.nullcontext()),
        ("aiohttp¹", collected_sparingly()),
    ):
        before = mock_stats(base_url)
        with collector:
            run = measured(
                bare_client(base_url, workload.sessions, workload.turns, workload.concurrency)
            )
        bare = slot_occupancy(before, mock_stats(base_url), workload.concurrency, **one_call)
        per_call[label] = report(label, calls, ideal, run, bare)
        print(f"  corix CPU per call = {per_call['corix'] / per_call[label]:.2f}x {label}'s")
    if floor:
        print(f"  lowest ratio with this own work: {lowest_ratios(per_call)}", flush=True)
    return per_call


def lowest_ratios(per_call: dict[str, float]) -> str:
    """``(aiohttp¹ + own) ÷ bare`` for each bare run: see the module's ``--floor``."""
    least = per_call["aiohttp¹"] + per_call["own"]
    return ", ".join(f"{least / per_call[label]:.2f}x {label}'s" for label in BARE_LABELS)


def summarise(rounds: list[dict[str, float]]) -> None:
    """Medians over the rounds: the machine's speed drifts between runs minutes apart, so
    each round's ratio is taken from its own runs, and the median of those is reported."""
    print(f"  over {len(rounds)} rounds, medians:", flush=True)
    for label in rounds[0]:
        print(f"    {label:9} cpu/call={median(r[label] for r in rounds):.3f}ms", flush=True)
    for label in BARE_LABELS:
        ratio = median(r["corix"] / r[label] for r in rounds)
        print(f"    corix CPU per call = {ratio:.2f}x {label}'s (median of the rounds' ratios)")
        if "own" in rounds[0]:
            least = median((r["aiohttp¹"] + r["own"]) / r[label] for r in rounds)
            print(f"    lowest ratio with this own work = {least:.2f}x {label}'s")


if __name__ == "__main__":
    main()
