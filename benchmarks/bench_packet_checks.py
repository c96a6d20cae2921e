"""Throughput of packet checks, the reference annotator's inner loop (target: >500 dialogues/s).

Dialogues are the built-in model tests answered by the guarded and unguarded demo
applications, repeated until there are ``--dialogues`` of them; each is checked with
``check_dialogue`` on one core.

    python benchmarks/bench_packet_checks.py --dialogues 20000
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import time
from typing import Any

from corix.apps.demo import build_demo_application
from corix.scenarios import (
    TestPacket,
    expand_model_tests,
    list_builtin_packs,
    resolve_pack,
)
from corix.scenarios.checks import check_dialogue

Dialogue = tuple[TestPacket, dict[str, Any], list[str | None], list[str]]


async def collect() -> list[Dialogue]:
    dialogues: list[Dialogue] = []
    for variant in ("guarded", "unguarded"):
        app = build_demo_application(variant)
        for name in list_builtin_packs():
            pack = resolve_pack(name)
            for test in expand_model_tests(pack):
                session = await app.start_session()
                replies = [(await session.respond(turn)).text for turn in test.turns]
                dialogues.append((pack.packet, test.parameters, replies, test.required_facts))
    return dialogues


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dialogues", type=int, default=20_000)
    args = parser.parse_args()

    sample = asyncio.run(collect())
    workload = list(itertools.islice(itertools.cycle(sample), args.dialogues))
    turns = sum(len(replies) for _, _, replies, _ in workload)
    characters = sum(len(r or "") for _, _, replies, _ in workload for r in replies)

    for packet, context, replies, required in sample:  # compile every packet before timing
        check_dialogue(packet, context, replies, required)
    start = time.perf_counter()
    violations = sum(check_dialogue(*dialogue).violated for dialogue in workload)
    elapsed = time.perf_counter() - start

    print(f"dialogues: {len(workload)} ({turns} replies, {characters / turns:.0f} chars/reply)")
    print(f"violations: {violations}")
    print(f"elapsed: {elapsed:.3f} s")
    print(
        f"throughput: {len(workload) / elapsed:,.0f} dialogues/s, {turns / elapsed:,.0f} replies/s"
    )


if __name__ == "__main__":
    main()
