"""The measurement core: every settled label, rate and agreement comes from here.

``measure(db, run_ids, spec)`` reads the stored record once and applies a
:class:`~corix.measurement.spec.MeasurementSpec`; the CLI, the report, the web pages,
persona coverage and exports only format what the returned :class:`Measurement` gives.
Two routes to the same number therefore give the same number. ``measure_in_chunks``
settles the same labels a chunk of sessions at a time, through the same settling, for
exports of runs too large to hold.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

from corix.assessment import (
    AnnotationSchema,
    HarmPack,
    builtin_harm_packs,
    harm_of,
    load_builtin_schema,
)
from corix.assessment.agreement import AgreementReport, LabelRow, compare_per_question
from corix.errors import CorixError, unknown_name
from corix.measurement.defect_rates import DefectRate, defect_rates
from corix.measurement.judges import (
    CorrectedRate,
    JudgeAgreement,
    corrected_rates,
    judge_agreements,
)
from corix.measurement.labels import (
    GUARDRAIL_VIOLATION,
    Label,
    SettledRecord,
    Settlement,
    StoredAnswer,
    Verdict,
    agreement_value,
    dialogue_value,
    iter_questionnaire_answers,
    leaf_question,
    leaves_from_answers,
    number_text,
    settle_labels,
    settlement_of,
)
from corix.measurement.spec import MeasurementSpec, ResolvedSpec, TreeRef, unknown_selector_error
from corix.measurement.stopping import SequentialRecord, sequential_records
from corix.measurement.trees import LeafSource, LeafTable, read_tree_text
from corix.storage import (
    Database,
    MeasuredDialogue,
    StoredPass,
    StoredResolution,
    iter_measured_dialogues,
    load_passes,
    measured_dialogues,
    pass_annotators,
    series_runs,
    stored_resolutions,
)

DEFAULT_RATE_GROUPING = ("harm", "application", "scenario", "level")
SEQUENTIAL_CELL = ("harm", "application", "scenario", "level")
"""What a sequential run's cell is: a rate grouped by less is not one cell's."""
STOPPED_ON = "the interval the sequential run stopped on"
"""How a sequential run's cell names its interval: the one its rule read when it stopped
(corrected Wilson for a width rule, the confidence sequence for a gate)."""

__all__ = [
    "DEFAULT_RATE_GROUPING",
    "ChunkedMeasurement",
    "Measurement",
    "SettledChunk",
    "SettledChunks",
    "measure",
    "measure_in_chunks",
    "measure_series",
    "resolve_spec",
    "stored_answers",
    "stored_leaves",
]


def resolve_spec(spec: MeasurementSpec, *, source: str | None = None) -> ResolvedSpec:
    """``spec`` with the hash of each tree file it names and corix's version."""
    refs = []
    for tree in spec.trees:
        text, _ = read_tree_text(tree)
        refs.append(TreeRef(tree=str(tree), sha256=hashlib.sha256(text.encode()).hexdigest()))
    return ResolvedSpec(spec=spec, trees=tuple(refs), source=source)


@dataclass(frozen=True)
class SettledChunk:
    """The settled labels and verdicts of a chunk of dialogues (all of them, or a run's
    sessions a chunk at a time)."""

    dialogues: tuple[MeasuredDialogue, ...]
    record: SettledRecord


class SettledChunks(Protocol):
    """What settled labels can be read from chunk by chunk: a whole :class:`Measurement`
    (one chunk) or a :class:`ChunkedMeasurement`."""

    @property
    def spec(self) -> ResolvedSpec: ...

    @property
    def run_ids(self) -> tuple[str, ...]: ...

    def chunks(self) -> Iterator[SettledChunk]: ...


@dataclass(frozen=True)
class Measurement:
    """One record measured under one specification."""

    spec: ResolvedSpec
    run_ids: tuple[str, ...]
    dialogues: tuple[MeasuredDialogue, ...]
    record: SettledRecord
    settlement: Settlement
    schema: AnnotationSchema
    packs: Mapping[str, HarmPack] = field(repr=False)
    sequential: SequentialRecord | None = None
    """What the run stopped on, when one sequential run is measured (see :meth:`rates`)."""

    def headline(self, name: Callable[[str], str] = str) -> str:
        """What every number of this measurement is made of: the specification in force
        and what settling did (annotators, ties, resolutions, dialogues left out); ``name``
        words annotators' stored names for readers."""
        return f"{self.spec.headline(name)}\n{self.settlement.text(name)}"

    def document(self) -> dict[str, object]:
        """The specification in force, its digest, the runs measured and the settlement."""
        return {
            "digest": self.spec.digest,
            "headline": self.headline(),
            **self.spec.model_dump(mode="json"),
            "runs": list(self.run_ids),
            "settlement": self.settlement.to_json(),
        }

    @property
    def labels(self) -> tuple[Label, ...]:
        return self.record.labels

    def chunks(self) -> Iterator[SettledChunk]:
        """The whole record as one chunk (see :class:`SettledChunks`)."""
        yield SettledChunk(self.dialogues, self.record)

    @property
    def verdicts(self) -> tuple[Verdict, ...]:
        return self.record.verdicts

    @property
    def not_measurable(self) -> tuple[MeasuredDialogue, ...]:
        return tuple(d for d in self.dialogues if d.not_measurable is not None)

    @property
    def harms(self) -> tuple[str, ...]:
        """The harms with verdicts, guardrail violations first."""
        found = {verdict.harm for verdict in self.verdicts}
        return tuple(sorted(found, key=lambda harm: (harm != GUARDRAIL_VIOLATION, harm)))

    def rates(self, by: Sequence[str] = DEFAULT_RATE_GROUPING) -> list[DefectRate]:
        """Defect rates per annotator group (as the specification says) × ``by``."""
        rates = defect_rates(
            self.verdicts, self.dialogues, self.record.failed, self.spec.spec, by=by
        )
        return [self._stopped_on(rate) for rate in rates]

    def _stopped_on(self, rate: DefectRate) -> DefectRate:
        """A sequential run's cell carries the interval its run stopped on (the confidence
        sequence for a gate; for a width rule, the corrected Wilson interval whose coverage
        at the stop is computed for that rule), not another interval beside it: when the
        rate is that cell's (the same harm, application, scenario and level, the sources
        the run annotated with, the same dialogues), the stored bounds replace its own."""
        if self.sequential is None:
            return rate
        key = tuple(rate.group.get(column) for column in SEQUENTIAL_CELL)
        cell = next(
            (
                c
                for c in self.sequential.cells
                if (c.harm, c.application, c.scenario, c.level) == key
            ),
            None,
        )
        annotated = set(self.sequential.annotated_as)
        kinds = {v.kind for v in self.verdicts if v.annotator in annotated}
        whose = rate.group.get("annotator") in annotated or {rate.group.get("source")} == kinds
        if cell is None or not whose or cell.n != rate.n:
            return rate
        named = f"{STOPPED_ON}: {cell.interval}" if cell.interval else STOPPED_ON
        return rate.model_copy(update={"ci_low": cell.low, "ci_high": cell.high, "interval": named})

    def dialogue_verdicts(self, harm: str = GUARDRAIL_VIOLATION) -> dict[str, dict[str, float]]:
        """session id → annotator source → the source's value for the dialogue under ``harm``.

        The value combines the source's annotators as :meth:`rates` does (their mean, or
        their settled verdict).
        """
        grouped: dict[tuple[str, str], list[Verdict]] = {}
        for verdict in self.verdicts:
            if verdict.harm == harm:
                grouped.setdefault((verdict.dialogue.session_id, verdict.kind), []).append(verdict)
        found: dict[str, dict[str, float]] = {}
        for (session_id, kind), verdicts in sorted(grouped.items()):
            found.setdefault(session_id, {})[kind] = dialogue_value(verdicts, self.spec.spec)
        return found

    def judge_corrected(
        self,
        judge: str = "llm",
        reference: str = "human",
        by: Sequence[str] = ("application",),
    ) -> list[CorrectedRate]:
        """Per harm × ``by`` (application, scenario, level): the ``judge`` source's rate
        corrected for its error as measured against the ``reference`` source on the
        dialogues both labelled, that group's error partially pooled with the harm's other
        groups' (see :mod:`corix.measurement.judges.corrected_rate` and ``judge_pooling``)."""
        unknown = [column for column in by if column not in ("application", "scenario", "level")]
        if unknown:
            raise ValueError(f"cannot group a judge's error by {unknown[0]!r}")
        cell = {d.session_id: tuple(getattr(d, column) for column in by) for d in self.dialogues}
        spec = self.spec.spec
        corrected = []
        for harm in self.harms:
            by_source = self.dialogue_verdicts(harm)
            keys = sorted({cell[s] for s, v in by_source.items() if judge in v})
            corrected += corrected_rates(
                [{"harm": harm, **dict(zip(by, key, strict=True))} for key in keys],
                [
                    {s: v[judge] for s, v in by_source.items() if cell[s] == key and judge in v}
                    for key in keys
                ],
                {s: v[reference] for s, v in by_source.items() if reference in v},
                judge=judge,
                reference=reference,
                resamples=spec.bootstrap,
                seed=spec.seed,
                confidence=spec.confidence,
            )
        return corrected

    def judge_agreement(self) -> list[JudgeAgreement]:
        """Per harm, how far the LLM judge agrees with people, or else with the reference
        annotator (see :mod:`corix.measurement.judges.agreement`)."""
        return judge_agreements(self.harms, self.dialogue_verdicts)

    def label_rows(
        self, question: str | None = None, *, annotators: Collection[str] | None = None
    ) -> list[LabelRow]:
        """Each annotator's own settled label per item (``session`` or ``session#turn``).

        Agreement compares what annotators said: a senior's resolution is not an
        annotator's label, so it takes no part (it would turn a settled disagreement into
        agreement). One value per annotator and item; under ``keep-disagreement`` an
        annotator's kept values are reduced to their median for it.
        """
        rows = []
        for label in self.labels:
            name = label.category if harm_of(label.category) is not None else label.question
            if question is not None and name != question:
                continue
            if annotators is not None and label.annotator not in annotators:
                continue
            value = agreement_value(label, self.schema)
            item = label.dialogue.session_id
            if label.turn_index is not None:
                item = f"{item}#{label.turn_index}"
            rows.append(
                LabelRow(item_id=item, annotator=label.annotator, value=value, question_id=name)
            )
        return rows

    def agreement(
        self,
        a: str,
        b: str,
        *,
        groups: Mapping[str, Sequence[str]] | None = None,
        question: str | None = None,
        nominal: bool = False,
        exclude: Collection[str] = (),
    ) -> list[AgreementReport]:
        """Agreement between annotators (or named groups) ``a`` and ``b``, per question.

        Each question's scale comes from the schema (harm severities are ordinal);
        ``nominal`` compares every question as nominal; ``exclude`` leaves questions out.
        """
        groups = groups or {}
        members = {name for side in (a, b) for name in groups.get(side, [side])}
        rows = [
            row
            for row in self.label_rows(question, annotators=members)
            if row.question_id not in exclude
        ]
        ordinal: set[str] = set()
        if not nominal:
            ordinal = {q.id for q in self.schema.questions() if q.is_ordinal}
            ordinal |= {
                row.question_id for row in rows if row.question_id and harm_of(row.question_id)
            }
        return compare_per_question(rows, a, b, groups=groups, ordinal_questions=ordinal)

    def annotators(self) -> dict[str, str]:
        """annotator → its kind, for every annotator with a label."""
        return {label.annotator: label.kind for label in self.labels}


def measure(
    db: Database,
    run_ids: Sequence[str],
    spec: MeasurementSpec | None = None,
    *,
    source: str | None = None,
    schema: AnnotationSchema | None = None,
    packs: Mapping[str, HarmPack] | None = None,
) -> Measurement:
    """Measure the runs ``run_ids`` together under ``spec`` (defaults when ``None``).

    ``source`` names the file ``spec`` was read from, for errors and provenance. Raises
    a :class:`~corix.errors.ConfigError` naming the field when a selector matches no
    annotator of the record.
    """
    spec = spec or MeasurementSpec()
    schema = schema or load_builtin_schema()
    all_packs = dict(packs if packs is not None else builtin_harm_packs())
    dialogues = measured_dialogues(db, run_ids)
    passes: list[StoredPass] = []
    for run_id in run_ids:
        passes.extend(load_passes(db, run_id=run_id))
    _check_selectors(spec, _annotators_of(passes), source)
    _check_harms(spec, all_packs, source)
    selected = _selected(spec, passes)
    resolutions = (
        stored_resolutions(db, [d.session_id for d in dialogues]) if spec.use_resolutions else []
    )
    record = _settled(spec, selected, dialogues, resolutions, schema, all_packs)
    stopped = sequential_records(db, run_ids) if len(run_ids) == 1 else []
    return Measurement(
        spec=resolve_spec(spec, source=source),
        run_ids=tuple(run_ids),
        dialogues=tuple(dialogues),
        record=record,
        settlement=settlement_of(spec.settling, selected, dialogues, resolutions, record),
        schema=schema,
        packs=all_packs,
        sequential=stopped[0] if stopped else None,
    )


@dataclass(frozen=True)
class ChunkedMeasurement:
    """A record measured a chunk of sessions at a time: what :func:`measure` settles,
    without holding the record.

    Exports walk it to write settled labels of runs of any size in flat memory; it holds
    no rates or agreement, which need the whole record.
    """

    db: Database = field(repr=False)
    spec: ResolvedSpec
    run_ids: tuple[str, ...]
    schema: AnnotationSchema = field(repr=False)
    packs: Mapping[str, HarmPack] = field(repr=False)
    sessions_per_chunk: int = 500

    def chunks(self) -> Iterator[SettledChunk]:
        """The measurable record's settled labels and verdicts, chunk by chunk in session
        order: the labels of all chunks, in turn, are :func:`measure`'s labels."""
        spec = self.spec.spec
        for dialogues in iter_measured_dialogues(
            self.db, self.run_ids, chunk_size=self.sessions_per_chunk
        ):
            ids = [dialogue.session_id for dialogue in dialogues]
            selected = _selected(spec, load_passes(self.db, session_ids=ids))
            resolutions = stored_resolutions(self.db, ids) if spec.use_resolutions else []
            record = _settled(spec, selected, dialogues, resolutions, self.schema, self.packs)
            yield SettledChunk(tuple(dialogues), record)


def measure_in_chunks(
    db: Database,
    run_ids: Sequence[str],
    spec: MeasurementSpec | None = None,
    *,
    source: str | None = None,
    schema: AnnotationSchema | None = None,
    packs: Mapping[str, HarmPack] | None = None,
    sessions_per_chunk: int = 500,
) -> ChunkedMeasurement:
    """Like :func:`measure`, but settled ``sessions_per_chunk`` sessions at a time when
    its chunks are read. The specification is checked here, before any chunk is read."""
    spec = spec or MeasurementSpec()
    all_packs = dict(packs if packs is not None else builtin_harm_packs())
    if spec.annotators:
        _check_selectors(spec, pass_annotators(db, run_ids), source)
    _check_harms(spec, all_packs, source)
    return ChunkedMeasurement(
        db=db,
        spec=resolve_spec(spec, source=source),
        run_ids=tuple(run_ids),
        schema=schema or load_builtin_schema(),
        packs=all_packs,
        sessions_per_chunk=sessions_per_chunk,
    )


def _selected(spec: MeasurementSpec, passes: Iterable[StoredPass]) -> list[StoredPass]:
    return [
        stored
        for stored in passes
        if spec.selects(
            stored.annotator, stored.annotator_kind, stored.provenance.get("guideline_version")
        )
    ]


def _settled(
    spec: MeasurementSpec,
    selected: Iterable[StoredPass],
    dialogues: Iterable[MeasuredDialogue],
    resolutions: Sequence[StoredResolution],
    schema: AnnotationSchema,
    packs: Mapping[str, HarmPack],
) -> SettledRecord:
    """The settled labels and verdicts of ``dialogues``: the one settling both routes take."""
    by_session = {dialogue.session_id: dialogue for dialogue in dialogues}
    record = settle_labels(
        selected, by_session, resolutions, rule=spec.settling, schema=schema, packs=packs
    )
    if not spec.harms:
        return record
    wanted = set(spec.harms)
    return SettledRecord(
        record.labels,
        tuple(v for v in record.verdicts if v.harm in wanted),
        {k: n for k, n in record.failed.items() if k[2] in wanted},
    )


def measure_series(
    db: Database, series: str, spec: MeasurementSpec | None = None, *, source: str | None = None
) -> Measurement:
    """Measure every run of the evaluation series ``series``: automated and human sessions."""
    run_ids = series_runs(db, series)
    if not run_ids:
        raise CorixError(f"no evaluation series named '{series}' with runs")
    return measure(db, run_ids, spec, source=source)


Annotator = tuple[str, str, str | None]
"""(name, kind, guideline version) of an annotator with passes."""


def _annotators_of(passes: Iterable[StoredPass]) -> set[Annotator]:
    return {(p.annotator, p.annotator_kind, p.provenance.get("guideline_version")) for p in passes}


def _check_selectors(
    spec: MeasurementSpec, known: Collection[Annotator], source: str | None
) -> None:
    ordered = sorted(known, key=str)
    for index, selector in enumerate(spec.annotators):
        if not any(selector.matches(*annotator) for annotator in ordered):
            raise unknown_selector_error(spec, index, sorted({a[0] for a in ordered}), source)


def _check_harms(spec: MeasurementSpec, packs: Mapping[str, HarmPack], source: str | None) -> None:
    unknown = [harm for harm in spec.harms if harm != GUARDRAIL_VIOLATION and harm not in packs]
    if unknown:
        raise _unknown_harm_error(unknown[0], packs, source)


def _unknown_harm_error(harm: str, packs: Mapping[str, HarmPack], source: str | None) -> CorixError:
    error = unknown_name("harm", harm, [GUARDRAIL_VIOLATION, *packs])
    where = f"{source}: field 'harms': " if source else "field 'harms': "
    return CorixError(where + str(error))


def stored_answers(measurement: Measurement, db: Database) -> Iterator[StoredAnswer]:
    """The measured record as leaf records: settled labels, then questionnaire answers.

    Every kept value of a label is one answer (one value unless the rule keeps
    disagreement); questionnaire answers of dialogues that are not measurable are left out.
    """
    for label in measurement.labels:
        dialogue = label.dialogue
        for value in label.settled.values:
            yield StoredAnswer(
                session_id=dialogue.session_id,
                application=dialogue.application,
                level=dialogue.level,
                scenario=dialogue.scenario,
                source=LeafSource.ANNOTATION,
                question=leaf_question(label.category, label.question),
                value=number_text(value) if isinstance(value, float) else str(value),
                respondent=_with_kind(label.annotator, label.kind),
                category=label.category,
                turn_index=label.turn_index,
                work_key=dialogue.key,
                tester=dialogue.tester,
            )
    measurable = {d.session_id for d in measurement.dialogues if d.not_measurable is None}
    by_id = {d.session_id: d for d in measurement.dialogues}
    for answer in iter_questionnaire_answers(db, measurement.run_ids, sessions=measurable):
        dialogue = by_id[answer.session_id]  # measurable: one of the measured dialogues
        yield replace(answer, work_key=dialogue.key, tester=dialogue.tester)


def _with_kind(annotator: str, kind: str) -> str:
    """``alice`` of kind ``human`` → ``human:alice``: the leaf's annotator names its kind, so
    trees can be scored per annotator source (names already so prefixed stay as they are)."""
    return annotator if annotator.startswith(f"{kind}:") else f"{kind}:{annotator}"


def stored_leaves(db: Database, run_id: str, spec: MeasurementSpec | None = None) -> LeafTable:
    """The CoRIx leaves of ``run_id`` under ``spec``: settled labels and questionnaire answers."""
    measurement = measure(db, [run_id], spec)
    return leaves_from_answers(stored_answers(measurement, db), origin=f"run {run_id}")
