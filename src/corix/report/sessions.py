"""The sessions of a run as the report shows them: an index of all, transcripts of some.

Every session gets an index entry (and an anchor in the report), read by one aggregate
query without loading turns. A transcript, with each annotator's answers beside the turn
they are about, is embedded for the first ``per_group`` sessions of each application ×
level × scenario group, streamed from storage (:func:`~corix.storage.iter_sessions`), so a run
of any size gives a report of bounded size.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from itertools import groupby

from corix.assessment import RiskOrder, RiskOrders, Value, consensus
from corix.domain import Level, SessionRecord
from corix.measurement import answer_text, leaf_question, number_text
from corix.storage import (
    Database,
    StoredPass,
    iter_sessions,
    load_passes,
    questionnaire_answers,
    session_index,
)


@dataclass(frozen=True)
class AnnotationNote:
    """One annotator's answer to one question in one pass, settled over its repeats.

    ``question`` is named as in the leaves: a harm severity by its ``harm:<pack>`` category.
    ``runs`` counts the repeats that answered; ``agreeing`` those that gave ``value``.
    ``reasoning`` is the first reasoning given with that value.
    """

    annotator: str
    category: str
    question: str
    value: str
    pass_no: int
    runs: int
    agreeing: int
    reasoning: str | None


@dataclass(frozen=True)
class FailedPass:
    annotator: str
    category: str
    error: str


@dataclass(frozen=True)
class QuestionnaireNote:
    respondent: str
    simulated: bool
    item: str
    value: str


@dataclass(frozen=True)
class Transcript:
    """A session's turns with the annotations about the dialogue and about each turn."""

    record: SessionRecord
    dialogue_notes: tuple[AnnotationNote, ...] = ()
    turn_notes: Mapping[int, tuple[AnnotationNote, ...]] = field(default_factory=dict)
    failed_passes: tuple[FailedPass, ...] = ()
    questionnaire: tuple[QuestionnaireNote, ...] = ()


@dataclass(frozen=True)
class SessionEntry:
    """A session in the report's index; ``transcript`` is set when it is embedded."""

    id: str
    application: str
    scenario: str
    level: str
    source: str
    n_turns: int
    n_failed_turns: int
    end_reason: str | None
    n_cut_turns: int = 0
    """Replies cut at the model's token limit (``finish_reason: length``)."""
    transcript: Transcript | None = None


@dataclass(frozen=True)
class SessionCatalog:
    """All sessions of a run, ordered by application, level (in testing order), scenario, id.

    ``labels`` names each session by its place in that order (``S1``, ``S2``…): short
    enough to list dozens next to a number, unlike ids.
    """

    entries: tuple[SessionEntry, ...]
    per_group: int
    labels: Mapping[str, str] = field(init=False)

    def __post_init__(self) -> None:
        labels = {entry.id: f"S{n}" for n, entry in enumerate(self.entries, start=1)}
        object.__setattr__(self, "labels", labels)

    @property
    def cut_turns(self) -> int:
        """Replies cut at the token limit, in all sessions."""
        return sum(entry.n_cut_turns for entry in self.entries)

    @property
    def embedded(self) -> int:
        return sum(entry.transcript is not None for entry in self.entries)

    def groups(self) -> Iterator[tuple[tuple[str, str, str], list[SessionEntry]]]:
        """(application, level, scenario) → its entries, in order."""
        for key, entries in groupby(self.entries, key=_group_key):
            yield key, list(entries)


def _group_key(entry: SessionEntry) -> tuple[str, str, str]:
    return (entry.application, entry.level, entry.scenario)


_LEVEL_ORDER = {level.value: rank for rank, level in enumerate(Level)}


@dataclass(frozen=True)
class NoteSettling:
    """How a transcript settles one pass's repeats: the measurement's rule and risk orders,
    so a note shows the value the measurement core would settle on."""

    rule: str
    orders: RiskOrders


def collect_sessions(
    db: Database, run_ids: Sequence[str], *, per_group: int, settling: NoteSettling
) -> SessionCatalog:
    """Index every complete session of ``run_ids``; embed up to ``per_group`` transcripts
    per application × level × scenario (the first by id), their annotations settled by
    ``settling``."""
    if per_group < 0:
        raise ValueError(f"per_group must be ≥ 0, got {per_group}")
    entries = _index(db, run_ids)
    taken: defaultdict[tuple[str, str, str], int] = defaultdict(int)
    embedded = []
    for entry in entries:
        group = _group_key(entry)
        if taken[group] < per_group:
            taken[group] += 1
            embedded.append(entry.id)
    records = {record.id: record for record in iter_sessions(db, session_ids=embedded)}
    transcripts = _transcripts(db, records, settling)
    entries = [replace(entry, transcript=transcripts.get(entry.id)) for entry in entries]
    entries.sort(key=lambda e: (e.application, _LEVEL_ORDER.get(e.level, 0), e.scenario, e.id))
    return SessionCatalog(tuple(entries), per_group)


def _index(db: Database, run_ids: Sequence[str]) -> list[SessionEntry]:
    """One entry per complete session, from one aggregate query (turns are not loaded)."""
    return [
        SessionEntry(
            id=row.id,
            application=row.application,
            scenario=row.scenario,
            level=row.level,
            source=row.source,
            end_reason=row.end_reason,
            n_turns=row.n_turns,
            n_failed_turns=row.n_failed_turns,
            n_cut_turns=row.n_cut_turns,
        )
        for row in session_index(db, run_ids)
    ]


def _transcripts(
    db: Database, records: Mapping[str, SessionRecord], settling: NoteSettling
) -> dict[str, Transcript]:
    ids = list(records)
    notes: dict[str, _Notes] = {session_id: _Notes() for session_id in ids}
    _add_passes(load_passes(db, session_ids=ids), notes, settling)
    for answer in questionnaire_answers(db, ids):
        value = answer_text(answer.value, answer.text)
        if value is not None:
            notes[answer.session_id].questionnaire.append(
                QuestionnaireNote(answer.respondent, answer.simulated, answer.item_id, value)
            )
    return {session_id: notes[session_id].transcript(records[session_id]) for session_id in ids}


@dataclass
class _Notes:
    dialogue: list[AnnotationNote] = field(default_factory=list)
    turns: defaultdict[int, list[AnnotationNote]] = field(default_factory=lambda: defaultdict(list))
    failed: list[FailedPass] = field(default_factory=list)
    questionnaire: list[QuestionnaireNote] = field(default_factory=list)

    def transcript(self, record: SessionRecord) -> Transcript:
        return Transcript(
            record=record,
            dialogue_notes=tuple(self.dialogue),
            turn_notes={turn: tuple(notes) for turn, notes in self.turns.items()},
            failed_passes=tuple(self.failed),
            questionnaire=tuple(self.questionnaire),
        )


def _add_passes(
    passes: Iterable[StoredPass], notes: Mapping[str, _Notes], settling: NoteSettling
) -> None:
    """Fold passes into notes, by session, annotator, category, pass and repeat."""
    ordered = sorted(
        passes, key=lambda p: (p.session_id, p.annotator, p.category, p.pass_no, p.repeat_no)
    )
    keyed = groupby(ordered, key=lambda p: (p.session_id, p.annotator, p.category, p.pass_no))
    for (session_id, annotator, category, pass_no), group in keyed:
        answers: dict[tuple[str, int | None], list[tuple[Value, str | None]]] = {}
        for stored in group:
            if not stored.ok:
                error = stored.error or stored.status
                notes[session_id].failed.append(FailedPass(annotator, category, error))
                continue
            for answer in stored.answers:
                if answer.value is not None:
                    answers.setdefault((answer.question_id, answer.turn_index), []).append(
                        (answer.value, answer.reasoning)
                    )
        for (question, turn), given in answers.items():
            note = _settled_note(annotator, category, question, pass_no, given, settling)
            target = notes[session_id]
            (target.dialogue if turn is None else target.turns[turn]).append(note)


def _settled_note(
    annotator: str,
    category: str,
    question: str,
    pass_no: int,
    given: Sequence[tuple[Value, str | None]],
    settling: NoteSettling,
) -> AnnotationNote:
    values = [value for value, _ in given]
    numbers = all(isinstance(value, float) for value in values)
    order = settling.orders.of(category, question)
    if order.ordinal and not numbers:
        order = RiskOrder(ordinal=False)  # words where numbers were expected: shown as given
    settled = consensus(values, rule=settling.rule, order=order)
    reasoning = next((reason for value, reason in given if value == settled.value and reason), None)
    return AnnotationNote(
        annotator=annotator,
        category=category,
        question=leaf_question(category, question),
        value=number_text(float(settled.value)) if numbers else str(settled.value),
        pass_no=pass_no,
        runs=settled.n_runs,
        agreeing=settled.n_agreeing,
        reasoning=reasoning,
    )
