"""Trees checked against the data: questions the labels show are gated but the tree does not.

A question asked only after another question's "yes" (content characterization after a
violation) describes only those dialogues; summarized beside questions asked of every
dialogue, fewer violations would score as more risk. A tree declares such questions
``gated: true`` and is then checked on load. When the stored labels show a question the
tree leaves undeclared was only ever answered where another was "yes", the tree is
probably wrong: :func:`undeclared_gating` says so, with the node and the evidence.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from corix.measurement.trees.compiled import TreeSpec
from corix.measurement.trees.leaves import LeafSource, LeafTable

MIN_NO_DIALOGUES = 10
"""Dialogues answered "no" to the gate (and never to the question) before a warning:
fewer could be chance."""

_YES = frozenset({"yes", "true"})
_YES_NO = _YES | {"no", "false"}

__all__ = ["MIN_NO_DIALOGUES", "UndeclaredGating", "undeclared_gating"]


@dataclass(frozen=True)
class UndeclaredGating:
    """``question`` (under ``nodes``) was answered only in dialogues where ``gate`` was yes."""

    question: str
    gate: str
    nodes: tuple[str, ...]
    answered: int
    gate_no: int

    @property
    def message(self) -> str:
        return (
            f"question '{self.question}' (node {', '.join(self.nodes)}) is not declared gated, "
            f"but the labels answer it only after '{self.gate}' is yes: in {self.answered} "
            f"dialogue(s), all with '{self.gate}' yes, and in none of the {self.gate_no} with "
            f"'{self.gate}' no; declare it `gated: true` or give it a node of its own"
        )


def undeclared_gating(spec: TreeSpec, leaves: LeafTable) -> list[UndeclaredGating]:
    """Undeclared gated questions of ``spec``, judged from the annotation rows of ``leaves``."""
    annotation = leaves.source.code_of(LeafSource.ANNOTATION.value)
    rows = np.flatnonzero(leaves.source.codes == annotation)
    width = len(leaves.dialogue_id.categories)
    dialogue = leaves.application.codes[rows] * width + leaves.dialogue_id.codes[rows]
    question = leaves.question.codes[rows]
    text = np.array([str(v).strip().lower() for v in leaves.value.categories], dtype=object)
    value = text[leaves.value.codes[rows]]
    answered: dict[str, np.ndarray] = {}
    gates: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for code, name in enumerate(leaves.question.categories):
        mine = question == code
        if not mine.any():
            continue
        answered[name] = np.unique(dialogue[mine])
        values = value[mine]
        if all(v in _YES_NO for v in set(values)):
            is_yes = np.isin(values, list(_YES))
            yes = np.unique(dialogue[mine][is_yes])
            gates[name] = (yes, np.setdiff1d(answered[name], yes))
    found = []
    for name, mapping in sorted(spec.questions.items()):
        if mapping.gated or name not in answered:
            continue
        for gate, (yes, no) in sorted(gates.items()):
            if gate == name or len(no) < MIN_NO_DIALOGUES:
                continue
            asked = answered[name]
            if np.isin(asked, yes).all() and not np.isin(asked, no).any():
                nodes = tuple(node.id for node in spec.nodes if node.question == name)
                found.append(UndeclaredGating(name, gate, nodes, len(asked), len(no)))
                break
    return found
