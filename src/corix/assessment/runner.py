"""Annotating a run: which sessions × targets × passes × repeats, gating, storage, stability.

For every complete session of a run the runner builds the blinded view once and asks the
annotator for its targets:

* annotation-schema categories in the schema's order, the screening category (ARIA: risk
  assessment) first; categories gated on a violation are asked only when that pass's
  screening answers record one (the consensus of its repeats, when repeated);
* harms (``harm:<pack>``), independent of gating.

Each (session, target, pass) is run ``repeats`` times with distinct seeds, so a response
cache never collapses them. Every run is stored as its own pass row (``repeat_no``); with
more than one repeat, the consensus of each answer over the annotator's runs is stored
too, with its flip rate (:mod:`corix.assessment.stability`). In adaptive mode an item
stops repeating once every one of its answers is settled (:func:`is_settled`).

Nothing is stored twice: what a previous invocation stored is skipped (and counted), so
an interrupted run resumes where it stopped. Passes go through the group-committing
:class:`~corix.storage.RecordWriter`. Sessions are worked on by ``concurrency`` workers;
model calls are further bounded by the client's own concurrency limit.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

from corix.assessment._names import unknown_name
from corix.assessment.annotators import (
    ANNOTATORS,
    Annotator,
    AnnotatorSetup,
    AnnotatorView,
    PassResult,
    build_annotator_view,
    harm_category,
    harm_of,
)
from corix.assessment.answers import Answer, AnswerKey, AnswerValue, is_violation
from corix.assessment.harms import HarmPack, builtin_harm_packs
from corix.assessment.schema import AnnotationSchema, load_builtin_schema
from corix.assessment.stability import consensus, is_settled
from corix.domain import SessionRecord
from corix.errors import CorixError
from corix.llm import EndpointConfig, LLMClient, ResponseCache
from corix.storage import Database, RecordWriter, Repository
from corix.storage.annotations import (
    StoredPass,
    answer_row,
    delete_consensus,
    delete_failed_passes,
    load_consensus,
    load_passes,
    session_infos,
    split_value,
)
from corix.testing.packs import ScenarioPack, resolve_pack

_SESSION_CHUNK = 200

Runs = list[tuple[Answer, ...]]
"""The answers of each successful run of one item."""


@dataclass(frozen=True)
class ProgressHooks:
    """Callbacks for a progress display: sessions planned, then each session done."""

    on_planned: Callable[[int], None] | None = None
    on_session_done: Callable[[], None] | None = None


class AnnotateOptions(BaseModel):
    """How much to ask: passes, repeats, which targets, how many sessions at once."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    passes: int = Field(default=1, ge=1)
    repeats: int = Field(default=1, ge=1)
    adaptive: bool = False
    min_repeats: int = Field(default=2, ge=1)
    """In adaptive mode, the runs every item gets before it may stop."""
    categories: tuple[str, ...] | None = None
    """Schema categories to ask (default: all the annotator answers)."""
    harms: tuple[str, ...] | None = None
    """Harm packs to judge (default: all the annotator judges)."""
    concurrency: int = Field(default=16, ge=1)
    seed: int = 0
    retry_failed: bool = False
    """Delete this annotator's failed passes first, so that they are asked again."""
    max_reasks: int = Field(default=2, ge=0)
    temperature: float | None = Field(default=None, ge=0)
    """Sampling temperature of LLM annotators; repeats need some randomness to be useful."""


class TargetCounts(BaseModel):
    """What happened to one target (category or harm) over the run."""

    stored: int = 0
    failed: int = 0
    already_stored: int = 0
    not_applicable: int = 0
    gated_out: int = 0
    repeats_saved: int = 0


class AnnotationSummary(BaseModel):
    run_id: str
    annotator: str
    """The registry name asked for (``reference``, ``llm``…)."""
    stored_as: str
    """The name passes are stored under (``reference``, ``llm:<model>``)."""
    sessions: int
    passes_stored: int
    passes_failed: int
    passes_already_stored: int
    consensus_rows: int
    prompt_tokens: int
    completion_tokens: int
    model_calls: int
    wall_s: float
    by_target: dict[str, TargetCounts]


class _Tally:
    def __init__(self) -> None:
        self.targets: defaultdict[str, TargetCounts] = defaultdict(TargetCounts)
        self.consensus_rows = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.model_calls = 0
        self.sessions = 0


def derive_seed(base: int, pass_no: int, repeat_no: int) -> int:
    """A distinct, reproducible seed for each pass and repeat."""
    digest = hashlib.sha256(f"{base}/{pass_no}/{repeat_no}".encode()).digest()
    return int.from_bytes(digest[:4], "big")


def _answers_of(stored: StoredPass) -> tuple[Answer, ...]:
    return tuple(
        Answer(
            question_id=a.question_id,
            turn_index=a.turn_index,
            value=a.value,
            reasoning=a.reasoning,
        )
        for a in stored.answers
    )


def _values_by_key(runs: Runs) -> dict[AnswerKey, list[AnswerValue]]:
    """Each question and turn's values over the runs that answered it."""
    values: dict[AnswerKey, list[AnswerValue]] = {}
    for run in runs:
        for answer in run:
            if answer.value is not None:
                values.setdefault(answer.key, []).append(answer.value)
    return values


def consensus_answers(runs: Runs, ordinal: Callable[[str], bool]) -> list[Answer]:
    """One answer per question and turn: the consensus of the runs that answered it."""
    if len(runs) == 1:
        return list(runs[0])  # a single run is its own consensus
    values = _values_by_key(runs)
    return [
        Answer(
            question_id=question_id,
            turn_index=turn,
            value=consensus(found, ordinal=ordinal(question_id)).value,
        )
        for (question_id, turn), found in values.items()
    ]


class _RunAnnotation:
    """One invocation: an annotator over the sessions of one run."""

    def __init__(
        self,
        db: Database,
        run_id: str,
        annotator: Annotator,
        options: AnnotateOptions,
        schema: AnnotationSchema,
        packs: Mapping[str, HarmPack],
    ) -> None:
        self.db = db
        self.run_id = run_id
        self.annotator = annotator
        self.options = options
        self.schema = schema
        self.packs = packs
        self.screening = schema.screening_category.id
        self.categories, self.harms = self._choose_targets()
        self.tally = _Tally()
        self.stored: dict[tuple[str, str, int], dict[int, StoredPass]] = {}
        self.with_consensus: set[tuple[str, str]] = set()
        self._scenario_packs: dict[str, ScenarioPack] = {}

    # -- planning ---------------------------------------------------------------------------
    def _choose_targets(self) -> tuple[list[str], list[str]]:
        """Categories and harms to ask: all the annotator offers, or those named in options."""
        offered = self.annotator.targets()
        schema_ids = [c.id for c in self.schema.ordered_categories()]
        categories = [t for t in offered if t in schema_ids]
        harms = [h for t in offered if (h := harm_of(t)) is not None]
        wanted_categories, wanted_harms = self.options.categories, self.options.harms
        if wanted_categories is not None or wanted_harms is not None:
            categories = self._pick(wanted_categories or (), categories, schema_ids, "category")
            harms = self._pick(wanted_harms or (), harms, list(self.packs), "harm pack")
        if not categories and not harms:
            raise CorixError(f"nothing to ask the annotator '{self.annotator.name}'")
        if self.annotator.deterministic and (self.options.passes > 1 or self.options.repeats > 1):
            raise CorixError(
                f"the annotator '{self.annotator.name}' is deterministic: further passes or "
                "repeats would only copy its judgment"
            )
        return categories, harms

    def _pick(
        self, wanted: Sequence[str], offered: list[str], known: list[str], kind: str
    ) -> list[str]:
        for name in wanted:
            if name not in known:
                raise unknown_name(kind, name, known)
            if name not in offered:
                raise CorixError(
                    f"the annotator '{self.annotator.name}' does not handle {kind} '{name}'"
                )
        return [name for name in offered if name in wanted]

    def _load_stored(self) -> None:
        name = self.annotator.name
        if self.options.retry_failed:
            delete_failed_passes(self.db, self.run_id, name)
        for stored in load_passes(self.db, run_id=self.run_id, annotator=name):
            key = (stored.session_id, stored.category, stored.pass_no)
            self.stored.setdefault(key, {})[stored.repeat_no] = stored
        self.with_consensus = {
            (row.session_id, row.category)
            for row in load_consensus(self.db, run_id=self.run_id, annotator=name)
        }

    def pack_for(self, scenario: str) -> ScenarioPack:
        pack = self._scenario_packs.get(scenario)
        if pack is None:
            pack = self._scenario_packs[scenario] = resolve_pack(scenario)
        return pack

    # -- running ----------------------------------------------------------------------------
    async def run(self, progress: ProgressHooks) -> None:
        Repository(self.db).get_run(self.run_id)
        await asyncio.to_thread(self._load_stored)
        infos = await asyncio.to_thread(session_infos, self.db, self.run_id)
        for scenario in sorted({info.scenario for info in infos.values()}):
            self.pack_for(scenario)  # an unknown scenario stops the run before any call
        if progress.on_planned is not None:
            progress.on_planned(len(infos))
        queue: asyncio.Queue[SessionRecord | None] = asyncio.Queue(self.options.concurrency * 2)
        async with RecordWriter(self.db) as writer, asyncio.TaskGroup() as group:
            group.create_task(self._feed(queue, list(infos)))
            for _ in range(self.options.concurrency):
                group.create_task(self._work(queue, writer, progress.on_session_done))

    async def _feed(self, queue: asyncio.Queue[SessionRecord | None], ids: list[str]) -> None:
        chunks = [ids[i : i + _SESSION_CHUNK] for i in range(0, len(ids), _SESSION_CHUNK)]
        # Each chunk loads in a thread while the workers annotate the one before it.
        following: asyncio.Task[list[SessionRecord]] | None = None
        for index, chunk in enumerate(chunks):
            current = following or self._loading(chunk)
            following = self._loading(chunks[index + 1]) if index + 1 < len(chunks) else None
            for record in await current:
                await queue.put(record)
        for _ in range(self.options.concurrency):
            await queue.put(None)

    def _loading(self, session_ids: list[str]) -> asyncio.Task[list[SessionRecord]]:
        return asyncio.create_task(asyncio.to_thread(self._load, session_ids))

    def _load(self, session_ids: list[str]) -> list[SessionRecord]:
        return list(Repository(self.db).iter_sessions(session_ids=session_ids))

    async def _work(
        self,
        queue: asyncio.Queue[SessionRecord | None],
        writer: RecordWriter,
        on_session_done: Callable[[], None] | None,
    ) -> None:
        while (record := await queue.get()) is not None:
            await _SessionAnnotation(self, writer, record).run()
            self.tally.sessions += 1
            if on_session_done is not None:
                on_session_done()

    def ordinal(self, category: str) -> Callable[[str], bool]:
        if harm_of(category) is not None:
            return lambda _question: True
        return lambda question: self.schema.question(question).is_ordinal


class _SessionAnnotation:
    """Every target, pass and repeat of one session."""

    def __init__(self, job: _RunAnnotation, writer: RecordWriter, record: SessionRecord) -> None:
        self.job = job
        self.writer = writer
        self.session_id = record.id
        self.view: AnnotatorView = build_annotator_view(record, job.pack_for(record.scenario))
        self.runs: defaultdict[str, Runs] = defaultdict(list)
        self.changed: set[str] = set()

    async def run(self) -> None:
        # One item at a time: the workers, one per session in flight, keep the model busy.
        options = self.job.options
        for pass_no in range(options.passes):
            await self._categories(pass_no)
            for harm in self.job.harms:
                await self._item(harm_category(harm), pass_no)
        if options.repeats > 1:
            await self._store_consensus()

    async def _categories(self, pass_no: int) -> None:
        schema = self.job.schema
        screening = self.job.screening
        wanted = self.job.categories
        if screening in wanted:
            screening_runs = await self._item(screening, pass_no)
        else:
            stored = self.job.stored.get((self.session_id, screening, pass_no), {})
            screening_runs = [_answers_of(p) for p in stored.values() if p.ok]
        violation = bool(screening_runs) and is_violation(
            schema, consensus_answers(screening_runs, self.job.ordinal(screening))
        )
        for category_id in wanted:
            if category_id == screening:
                continue
            if schema.category(category_id).gate.requires_violation and not violation:
                self.job.tally.targets[category_id].gated_out += 1
                continue
            await self._item(category_id, pass_no)

    async def _item(self, target: str, pass_no: int) -> Runs:
        job, options = self.job, self.job.options
        counts = job.tally.targets[target]
        stored = job.stored.get((self.session_id, target, pass_no), {})
        runs: Runs = [_answers_of(p) for p in stored.values() if p.ok]
        for repeat_no in range(options.repeats):
            if repeat_no in stored:
                counts.already_stored += 1
                continue
            if options.adaptive and self._settled(target, runs):
                counts.repeats_saved += options.repeats - repeat_no
                break
            seed = derive_seed(options.seed, pass_no, repeat_no)
            result = await job.annotator.annotate(self.view, target, seed=seed)
            if result is None:
                counts.not_applicable += 1
                break
            self._store(result, pass_no, repeat_no)
            if result.ok:
                runs.append(result.answers)
        self.runs[target].extend(runs)
        return runs

    def _settled(self, target: str, runs: Runs) -> bool:
        options = self.job.options
        if len(runs) < options.min_repeats:
            return False
        ordinal = self.job.ordinal(target)
        return all(
            is_settled(
                found,
                min_runs=min(options.min_repeats, options.repeats),
                max_runs=options.repeats,
                ordinal=ordinal(question_id),
            )
            for (question_id, _turn), found in _values_by_key(runs).items()
        )

    def _store(self, result: PassResult, pass_no: int, repeat_no: int) -> None:
        job = self.job
        counts = job.tally.targets[result.category]
        if result.ok:
            counts.stored += 1
        else:
            counts.failed += 1
        details = result.provenance.details
        job.tally.model_calls += int(details.get("attempts", 0))
        job.tally.prompt_tokens += int(details.get("prompt_tokens", 0))
        job.tally.completion_tokens += int(details.get("completion_tokens", 0))
        self.changed.add(result.category)
        self.writer.add_pass(
            {
                "session_id": self.session_id,
                "category": result.category,
                "annotator": job.annotator.name,
                "annotator_kind": job.annotator.kind.value,
                "pass_no": pass_no,
                "repeat_no": repeat_no,
                "status": "ok" if result.ok else "failed",
                "error": result.error,
                "provenance": result.provenance.model_dump(mode="json"),
            },
            [answer_row(a.question_id, a.turn_index, a.value, a.reasoning) for a in result.answers],
        )

    async def _store_consensus(self) -> None:
        job = self.job
        name = job.annotator.name
        for target in sorted(self.changed):
            runs = self.runs[target]
            if not runs:
                continue
            if (self.session_id, target) in job.with_consensus:
                await asyncio.to_thread(delete_consensus, job.db, [(self.session_id, target, name)])
            for row in consensus_rows(self.session_id, target, name, runs, job.ordinal(target)):
                self.writer.add_consensus(row)
                job.tally.consensus_rows += 1


def consensus_rows(
    session_id: str,
    category: str,
    annotator: str,
    runs: Runs,
    ordinal: Callable[[str], bool],
) -> list[dict[str, object]]:
    """Consensus rows for one item: per question and turn, over the runs that answered it.

    ``method`` is ``majority`` (nominal) or ``lower_median`` (ordinal), with ``_tie``
    appended when the runs tied and the tie was broken deterministically.
    """
    rows: list[dict[str, object]] = []
    for (question_id, turn), found in sorted(
        _values_by_key(runs).items(), key=lambda item: (item[0][0], item[0][1] or 0)
    ):
        is_ordinal = ordinal(question_id)
        result = consensus(found, ordinal=is_ordinal)
        method = "lower_median" if is_ordinal else "majority"
        rows.append(
            {
                "session_id": session_id,
                "category": category,
                "annotator": annotator,
                "question_id": question_id,
                "turn_index": turn,
                **split_value(result.value),
                "method": f"{method}_tie" if result.tie else method,
                "n_runs": result.n_runs,
                "flip_rate": result.flip_rate,
            }
        )
    return rows


# --- entry points -------------------------------------------------------------------------------


def build_annotator(
    name: str,
    *,
    client: LLMClient | None = None,
    schema: AnnotationSchema | None = None,
    packs: Mapping[str, HarmPack] | None = None,
    max_reasks: int = 2,
    temperature: float | None = None,
) -> Annotator:
    """The registered annotator ``name`` (an unknown name gets a "did you mean")."""
    factory = ANNOTATORS.get(name)
    setup = AnnotatorSetup(
        schema=schema or load_builtin_schema(),
        harm_packs=packs if packs is not None else builtin_harm_packs(),
        client=client,
        max_reasks=max_reasks,
        temperature=temperature,
    )
    return factory(setup)


async def annotate_run_async(
    db: Database,
    run_id: str,
    annotator: str = "reference",
    *,
    options: AnnotateOptions | None = None,
    client: LLMClient | None = None,
    progress: ProgressHooks | None = None,
) -> AnnotationSummary:
    """Annotate the complete sessions of ``run_id`` with the registered ``annotator``.

    LLM annotators need ``client`` (the caller owns and closes it). Bad options and
    unknown names raise before any session is annotated.
    """
    options = options or AnnotateOptions()
    schema = load_builtin_schema()
    packs = builtin_harm_packs()
    built = build_annotator(
        annotator,
        client=client,
        schema=schema,
        packs=packs,
        max_reasks=options.max_reasks,
        temperature=options.temperature,
    )
    job = _RunAnnotation(db, run_id, built, options, schema, packs)
    started = time.perf_counter()
    await job.run(progress or ProgressHooks())
    return _summary(job, annotator, time.perf_counter() - started)


def annotate_run(
    db: Database,
    run_id: str,
    annotator: str = "reference",
    *,
    options: AnnotateOptions | None = None,
    endpoint: EndpointConfig | None = None,
    cache: ResponseCache | None = None,
    progress: ProgressHooks | None = None,
) -> AnnotationSummary:
    """:func:`annotate_run_async` in a fresh event loop; opens a client on ``endpoint``."""

    async def main() -> AnnotationSummary:
        if endpoint is None:
            return await annotate_run_async(
                db, run_id, annotator, options=options, progress=progress
            )
        async with LLMClient(endpoint, cache=cache) as client:
            return await annotate_run_async(
                db,
                run_id,
                annotator,
                options=options,
                client=client,
                progress=progress,
            )

    return asyncio.run(main())


def _summary(job: _RunAnnotation, annotator: str, wall_s: float) -> AnnotationSummary:
    targets = dict(sorted(job.tally.targets.items()))
    return AnnotationSummary(
        run_id=job.run_id,
        annotator=annotator,
        stored_as=job.annotator.name,
        sessions=job.tally.sessions,
        passes_stored=sum(c.stored for c in targets.values()),
        passes_failed=sum(c.failed for c in targets.values()),
        passes_already_stored=sum(c.already_stored for c in targets.values()),
        consensus_rows=job.tally.consensus_rows,
        prompt_tokens=job.tally.prompt_tokens,
        completion_tokens=job.tally.completion_tokens,
        model_calls=job.tally.model_calls,
        wall_s=round(wall_s, 3),
        by_target=targets,
    )
