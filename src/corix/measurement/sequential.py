"""A sequential run's decisions: label each wave, read each cell's confidence sequence.

After every wave (see :mod:`corix.execution.waves`) the run's automated annotators label
the new dialogues, the measurement core settles their verdicts, and each cell —
application × scenario × level × harm, for the guardrail violation and every harm the
plan gates (only the gated ones under the gate rule alone) — replays its stopping rule
(:mod:`corix.measurement.stopping_rules`) over its dialogues in the plan's order. A
dialogue's value is its annotators' verdicts combined as the specification says,
averaged over annotator sources; dialogues that are not measurable add nothing. A group
of work items stays open while any of its cells is.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Mapping, Sequence

from corix.assessment.annotation_run import annotate_run_async
from corix.domain import SequentialCell, WaveReport
from corix.execution import Group, WaveDecision, WaveOrder
from corix.llm import LLMClient
from corix.measurement.core import measure
from corix.measurement.settling import GUARDRAIL_VIOLATION
from corix.measurement.spec import AnnotatorSelector, MeasurementSpec
from corix.measurement.stopping_rules import StoppingRule, cell_progress
from corix.storage import Database

__all__ = ["SequentialDecider", "cell_harms"]


def cell_harms(gates: Mapping[str, float]) -> list[str]:
    """The harms a sequential run watches: the guardrail violation and the gated harms."""
    return [GUARDRAIL_VIOLATION, *sorted(h for h in gates if h != GUARDRAIL_VIOLATION)]


class SequentialDecider:
    """Labels a wave with ``annotators`` and decides which groups stay open under ``rule``."""

    def __init__(
        self,
        db: Database,
        rule: StoppingRule,
        *,
        annotators: Sequence[str],
        gates: Mapping[str, float],
        client: LLMClient | None = None,
    ) -> None:
        self._db = db
        self._rule = rule
        self._annotators = list(annotators)
        self._gates = dict(gates)
        self._client = client

    async def __call__(
        self, run_id: str, order: WaveOrder, ran: Mapping[Group, int]
    ) -> WaveDecision:
        stored_as = []
        for annotator in self._annotators:
            summary = await annotate_run_async(self._db, run_id, annotator, client=self._client)
            stored_as.append(summary.stored_as)
        spec = MeasurementSpec(
            annotators=tuple(AnnotatorSelector(name=name) for name in stored_as),
            confidence=self._rule.confidence,
        )
        measurement = measure(self._db, [run_id], spec)
        position = {
            key: (group, index) for group, keys in order.items() for index, key in enumerate(keys)
        }
        key_of = {d.session_id: d.key for d in measurement.dialogues}
        cells = []
        still_open: set[Group] = set()
        # Under the gate alone, only gated harms have a decision to settle.
        harms = cell_harms(self._gates) if self._rule.width is not None else sorted(self._gates)
        for harm in harms:
            found: defaultdict[Group, list[tuple[int, float]]] = defaultdict(list)
            for session_id, by_source in measurement.dialogue_verdicts(harm).items():
                group, index = position[key_of[session_id]]
                found[group].append((index, statistics.fmean(by_source.values())))
            for group, keys in sorted(order.items()):
                pairs = sorted(found.get(group, []))
                progress = cell_progress(
                    [value for _, value in pairs],
                    [index for index, _ in pairs],
                    self._rule,
                    ran=ran[group],
                    planned=len(keys),
                    threshold=self._gates.get(harm),
                )
                if progress.stopped is None:
                    still_open.add(group)
                application, scenario, level = group
                cells.append(
                    SequentialCell(
                        application=application,
                        scenario=scenario,
                        level=level,
                        harm=harm,
                        gate=self._gates.get(harm),
                        **progress.model_dump(),
                    )
                )
        report = WaveReport(rule=self._rule.text(), annotated_as=stored_as, cells=cells)
        return WaveDecision(frozenset(still_open), report)
