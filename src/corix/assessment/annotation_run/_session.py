"""Annotating one session: every target, pass and repeat, gating, storing and consensus.

Each (session, target, pass) is run ``repeats`` times with distinct seeds, so a response
cache never collapses them. In adaptive mode an item stops repeating once every one of
its answers is settled: the chance that the remaining runs would settle it otherwise is at
most ``max_change`` for a judge of the noise the pilot measured
(:func:`~corix.assessment.stability.change_probability`,
:mod:`~corix.assessment.annotation_run._pilot`); answers without a closed scale
(free text) stop once unanimous or when the remaining runs cannot change them
(:func:`~corix.assessment.stability.is_settled`). With ``max_flip_rate`` > 0 an item also
stops once its flip rate is at most that. Each item's stop depends on its own runs and the
pilot's noise only, so the same seed asks the same repeats whatever order sessions run in.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections import defaultdict

from corix.assessment.annotation_run._job import AnnotationJob
from corix.assessment.annotation_run._pilot import PILOT_REPEATS
from corix.assessment.annotation_run._summary import AnnotationTally
from corix.assessment.annotation_run.repeat_consensus import (
    Runs,
    answers_of,
    consensus_rows,
    settled_violation,
    values_by_key,
)
from corix.assessment.annotators import (
    AnnotatorView,
    PassResult,
    build_annotator_view,
    harm_category,
)
from corix.assessment.answers import answer_records
from corix.assessment.settling_rules import Value
from corix.assessment.stability import change_probability, is_settled
from corix.domain import SessionRecord
from corix.storage import AnnotationSink, NewPass, delete_consensus


def derive_seed(base: int, pass_no: int, repeat_no: int) -> int:
    """A distinct, reproducible seed for each pass and repeat."""
    digest = hashlib.sha256(f"{base}/{pass_no}/{repeat_no}".encode()).digest()
    return int.from_bytes(digest[:4], "big")


class SessionAnnotation:
    """Every target, pass and repeat of one session."""

    def __init__(
        self,
        job: AnnotationJob,
        writer: AnnotationSink,
        record: SessionRecord,
        tally: AnnotationTally,
    ) -> None:
        self.job = job
        self.writer = writer
        self.tally = tally
        self.session_id = record.id
        self.view: AnnotatorView = build_annotator_view(record, job.pack_for(record.scenario))
        self.runs: defaultdict[str, Runs] = defaultdict(list)
        self.changed: set[str] = set()

    async def run(self) -> None:
        # One item at a time: the workers, one per session in flight, keep the model busy.
        # An item's passes follow each other: their prompts are the same up to the seed, so
        # a model that keeps its evaluated prompt (a local one, a server's cache) reads the
        # second one for free.
        options = self.job.options
        violations = await self._screening()
        for category_id in self.job.categories:
            if category_id == self.job.screening:
                continue
            gated = self.job.schema.category(category_id).gate.requires_violation
            for pass_no in range(options.passes):
                if gated and not violations[pass_no]:
                    self.tally.targets[category_id].gated_out += 1
                else:
                    await self._item(category_id, pass_no)
        for harm in self.job.harms:
            for pass_no in range(options.passes):
                await self._item(harm_category(harm), pass_no)
        if options.repeats > 1:
            await self._store_consensus()

    async def run_pilot(self) -> None:
        """Ask the first repeats of the items every session gets, nothing more: the
        adaptive pilot measures the judge's noise from them."""
        for target in self.job.pilot_targets():
            for pass_no in range(self.job.options.passes):
                await self._item(target, pass_no, upto=PILOT_REPEATS)

    async def _screening(self) -> list[bool]:
        """Per pass, whether its screening settled on a violation (asked here when wanted,
        else read from what is stored): the gated categories follow it."""
        screening = self.job.screening
        violations = []
        for pass_no in range(self.job.options.passes):
            if screening in self.job.categories:
                runs = await self._item(screening, pass_no)
            else:
                stored = self.job.stored_repeats(self.session_id, screening, pass_no)
                runs = [answers_of(p) for p in stored.values() if p.ok]
            violations.append(settled_violation(self.job.schema, runs))
        return violations

    async def _item(self, target: str, pass_no: int, *, upto: int | None = None) -> Runs:
        """Ask one item's repeats (the first ``upto`` only, never stopping early, when
        given) and return its successful runs."""
        job, options = self.job, self.job.options
        counts = self.tally.targets[target]
        stored = job.stored_repeats(self.session_id, target, pass_no)
        runs: Runs = [answers_of(p) for p in stored.values() if p.ok]
        adaptive = options.adaptive and upto is None
        for repeat_no in range(min(options.repeats, upto or options.repeats)):
            if repeat_no in stored:
                counts.already_stored += 1
                continue
            if adaptive and self._settled(target, runs):
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
        if len(runs) < self.job.options.min_repeats:
            return False
        return all(
            self._answer_settled(target, question_id, found)
            for (question_id, _turn), found in values_by_key(runs).items()
        )

    def _answer_settled(self, target: str, question_id: str, found: list[Value]) -> bool:
        job, options = self.job, self.job.options
        max_runs = options.repeats
        ordinal = job.ordinal(target)(question_id)
        if options.max_flip_rate > 0 and is_settled(
            found,
            min_runs=min(options.min_repeats, max_runs),
            max_runs=max_runs,
            agreement=1.0 - options.max_flip_rate,
            ordinal=ordinal,
        ):
            return True
        scale = job.scale(target)(question_id)
        change = None
        if scale is not None:
            change = change_probability(
                found,
                max_runs=max_runs,
                scale=scale,
                noise=job.noise,
                order=job.risk_orders.of(target, question_id),
            )
        if change is not None:
            return change <= options.max_change
        return is_settled(found, min_runs=1, max_runs=max_runs, agreement=1.0, ordinal=ordinal)

    def _store(self, result: PassResult, pass_no: int, repeat_no: int) -> None:
        job = self.job
        counts = self.tally.targets[result.category]
        if result.ok:
            counts.stored += 1
        else:
            counts.failed += 1
        calls = result.provenance.details
        if calls is not None:
            counts.cut_replies += calls.finish_reason == "length"
            counts.cut_dialogues += calls.context_cut is not None
            self.tally.model_calls += calls.attempts
            self.tally.prompt_tokens += calls.prompt_tokens
            self.tally.completion_tokens += calls.completion_tokens
        self.changed.add(result.category)
        self.writer.add_pass(
            NewPass(
                session_id=self.session_id,
                category=result.category,
                annotator=job.annotator.name,
                annotator_kind=job.annotator.kind.value,
                pass_no=pass_no,
                repeat_no=repeat_no,
                ok=result.ok,
                error=result.error,
                provenance=result.provenance.model_dump(mode="json"),
                answers=answer_records(result.answers),
            )
        )

    async def _store_consensus(self) -> None:
        """Derive the consensus of each item from its stored runs, idempotently.

        An item gets its consensus (re)written when this invocation added runs to it, or
        when what is stored is missing or incomplete — a run killed between storing the
        repeats and their consensus is repaired by the next invocation.
        """
        job = self.job
        name = job.annotator.name
        for target in sorted(self.runs):
            runs = self.runs[target]
            if not runs:
                continue
            rows = consensus_rows(self.session_id, target, name, runs, job.risk_orders)
            stored = job.with_consensus.get((self.session_id, target), 0)
            if target not in self.changed and stored == len(rows):
                continue
            if stored:
                await asyncio.to_thread(delete_consensus, job.db, [(self.session_id, target, name)])
            for row in rows:
                self.writer.add_consensus(row)
                self.tally.consensus_rows += 1
