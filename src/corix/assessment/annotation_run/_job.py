"""One annotation job: what to ask an annotator over one run, and what it already stored.

The targets are checked when the job is made, so bad options and unknown names raise
before any session is annotated.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence

from corix.assessment.annotation_run._options import AnnotateOptions
from corix.assessment.annotation_run._summary import AnnotationTally
from corix.assessment.annotators import Annotator, harm_category, harm_of
from corix.assessment.harms import HarmPack
from corix.assessment.risk_orders import RiskOrders
from corix.assessment.schema import AnnotationSchema, QuestionType
from corix.assessment.settling_rules import Value
from corix.errors import CorixError, unknown_name
from corix.scenarios import ScenarioPack
from corix.storage import (
    Database,
    StoredPass,
    delete_failed_passes,
    load_consensus,
    load_passes,
    run_pack,
)

StoredRepeats = dict[int, StoredPass]
"""The stored runs of one (session, target, pass), by repeat number."""


class AnnotationJob:
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
        self.risk_orders = RiskOrders(schema, packs)
        self.screening = schema.screening_category.id
        self.categories, self.harms = self._choose_targets()
        self.tally = AnnotationTally()
        self.noise = options.judge_noise
        """The judge noise adaptive repeats assume: measured by the pilot once it ran
        (:mod:`~corix.assessment.annotation_run._pilot`)."""
        self.stored: dict[tuple[str, str, int], StoredRepeats] = {}
        self.with_consensus: dict[tuple[str, str], int] = {}
        """(session, target) → consensus rows stored before this invocation."""
        self._scenario_packs: dict[str, ScenarioPack] = {}
        self.reads = threading.Lock()
        """Held while sessions are read: a read streams one query and loads what it names
        through a second connection, so two at once could split a capped pool (a Ray
        worker's) between them and wait for each other forever."""

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

    def pilot_targets(self) -> list[str]:
        """The targets asked of every session whatever its screening says: the screening,
        ungated categories and harms."""
        ungated = [
            c for c in self.categories if not self.schema.category(c).gate.requires_violation
        ]
        return [*ungated, *(harm_category(h) for h in self.harms)]

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

    def load_stored(self) -> None:
        """Remember what previous invocations stored, so that nothing is asked twice."""
        name = self.annotator.name
        if self.options.retry_failed:
            delete_failed_passes(
                self.db,
                self.run_id,
                name,
                kind=self.annotator.kind.value,
                guidelines=self._guidelines(),
            )
        for stored in load_passes(self.db, run_id=self.run_id, annotator=name):
            key = (stored.session_id, stored.category, stored.pass_no)
            self.stored.setdefault(key, {})[stored.repeat_no] = stored
        self.with_consensus = {}
        for row in load_consensus(self.db, run_id=self.run_id, annotator=name):
            item = (row.session_id, row.category)
            self.with_consensus[item] = self.with_consensus.get(item, 0) + 1

    def refresh_stored(self, session_ids: Sequence[str]) -> None:
        """Load again what is stored for ``session_ids``: another process (a Ray worker
        that died) may have stored passes since :meth:`load_stored`."""
        name, wanted = self.annotator.name, set(session_ids)
        self.stored = {k: v for k, v in self.stored.items() if k[0] not in wanted}
        self.with_consensus = {k: n for k, n in self.with_consensus.items() if k[0] not in wanted}
        ids = list(session_ids)
        for stored in load_passes(self.db, run_id=self.run_id, session_ids=ids, annotator=name):
            key = (stored.session_id, stored.category, stored.pass_no)
            self.stored.setdefault(key, {})[stored.repeat_no] = stored
        for row in load_consensus(self.db, run_id=self.run_id, session_ids=ids, annotator=name):
            item = (row.session_id, row.category)
            self.with_consensus[item] = self.with_consensus.get(item, 0) + 1

    def _guidelines(self) -> dict[str, str]:
        """The guidelines, as named in a stored guideline version, of each target asked."""
        named = dict.fromkeys(self.categories, f"{self.schema.id}-{self.schema.version}")
        for pack_id in self.harms:
            pack = self.packs[pack_id]
            named[harm_category(pack_id)] = f"{pack.id}-{pack.version}"
        return named

    def stored_repeats(self, session_id: str, target: str, pass_no: int) -> StoredRepeats:
        return self.stored.get((session_id, target, pass_no), {})

    def pack_for(self, scenario: str) -> ScenarioPack:
        """The scenario's pack as the run stored it, never looked up by name."""
        pack = self._scenario_packs.get(scenario)
        if pack is None:
            pack = self._scenario_packs[scenario] = run_pack(self.db, self.run_id, scenario)
        return pack

    def ordinal(self, category: str) -> Callable[[str], bool]:
        """Whether each question of ``category`` is ordinal; harm severities always are."""
        if harm_of(category) is not None:
            return lambda _question: True
        return lambda question: self.schema.question(question).is_ordinal

    def scale(self, category: str) -> Callable[[str], tuple[Value, ...] | None]:
        """Every answer each question of ``category`` allows, or ``None`` when the set is
        not closed (free text, a slider with fractional ends)."""
        harm = harm_of(category)
        if harm is not None:
            pack_scale = self.packs[harm].scale
            points = tuple(float(v) for v in range(pack_scale.min, pack_scale.max + 1))
            return lambda _question: points
        return lambda question: _closed_scale(self.schema, question)


def _closed_scale(schema: AnnotationSchema, question_id: str) -> tuple[Value, ...] | None:
    question = schema.question(question_id)
    if question.type is QuestionType.SLIDER:
        low, high = question.slider_range
        if low.is_integer() and high.is_integer():
            return tuple(float(v) for v in range(int(low), int(high) + 1))
        return None
    return question.allowed_values() or None
