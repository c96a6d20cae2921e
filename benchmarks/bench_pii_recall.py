"""Benchmark: how much of the seeded corpus's personal information a release redacts.

    python benchmarks/bench_pii_recall.py                 # regex core, then with Presidio
    python benchmarks/bench_pii_recall.py --detector regex --sessions 40

Runs the release's own scrubber (``corix.release.scrub``: the detectors, the first pass
that collects identifiers, the second that finds them wherever they recur) over
``benchmarks/pii_corpus.jsonl`` (written by ``pii_corpus.py``) and prints recall per kind:
the share of planted occurrences whose every letter and digit lies inside a redaction,
whatever kind the detector called it. ``NAME`` is a person's first mention found by the
detectors directly; ``NAME_RECURRENCE, confirmed`` counts only the
recurrences of a person some other occurrence of whom a detector found directly: the
names "already confirmed once". ``spurious`` counts redactions that touch nothing planted;
``listed, left in clear`` the texts of findings (what a review lists) whose words still
appear in a row the release writes, in any case.
docs/formats.md reports the table.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import pii_corpus
from corix.release.pii import PiiDetector, merge_findings
from corix.release.pseudonyms import Pseudonymizer
from corix.release.recurrence import Identifiers
from corix.release.scrub import Scrubber

CONFIRMED = "NAME_RECURRENCE, confirmed"
ROWS = (*pii_corpus.KINDS[:2], CONFIRMED, *pii_corpus.KINDS[2:])
_COLUMNS = {"user_text": "user", "response_text": "response"}
_WORD = re.compile(r"[^\W_]+")
_LONGEST = 8  # words in the longest identifier looked for in the released text


@dataclass
class Recall:
    caught: Counter[str]
    total: Counter[str]
    spurious: int
    left_in_clear: list[str]
    """Texts a review would list that are still in the released text (any case, as words)."""
    seconds: float

    def of(self, kind: str) -> float:
        return self.caught[kind] / self.total[kind] if self.total[kind] else float("nan")


def _rows(session: dict[str, object]) -> Iterator[tuple[str, dict[str, object], str]]:
    """The corpus session as the release's table rows, with where each text is."""
    turns = session["turns"]
    assert isinstance(turns, list)
    for index, turn in enumerate(turns):
        row = {
            "session_id": session["session"],
            "turn": index,
            "user_text": turn["user"],
            "response_text": turn["response"],
            "error": None,
        }
        yield "turns", row, f"turns/{index}"
    row = {
        "session_id": session["session"],
        "respondent": "tester",
        "item_id": "comment",
        "text": session["questionnaire"],
    }
    yield "questionnaire", row, "questionnaire"


def _where(prefix: str, column: str) -> str:
    return f"{prefix}/{_COLUMNS[column]}" if column in _COLUMNS else prefix


@dataclass
class _Pass:
    """What one pass of the scrubber redacted, and (the second pass) what it released."""

    spans: dict[tuple[str, str], list[tuple[int, int]]] = field(default_factory=dict)
    listed: set[tuple[str, ...]] = field(default_factory=set)
    released: set[tuple[str, ...]] = field(default_factory=set)


def _run(
    scrubber: Scrubber, corpus: Sequence[dict[str, object]], identifiers: Identifiers | None
) -> _Pass:
    """One pass over ``corpus``. With ``identifiers``, the release's first pass: what the
    detectors find directly is collected; without, the second: what is redacted and
    released once the identifiers are learned."""
    done = _Pass()
    for session in corpus:
        for table, row, prefix in _rows(session):
            if identifiers is not None:
                for column, found in scrubber.collect(table, row, identifiers).items():
                    key = (str(session["session"]), _where(prefix, column))
                    done.spans[key] = [(f.start, f.end) for f in merge_findings(found)]
                continue
            located = list(scrubber.locate(table, row))
            for one in located:
                done.listed.add(_words(one.text))
                key = (str(session["session"]), _where(prefix, one.column))
                done.spans.setdefault(key, []).append((one.finding.start, one.finding.end))
            released = scrubber.released(table, row, located)
            for column in _COLUMNS.keys() | {"text"}:
                words = _words(str(released.get(column) or ""))
                done.released.update(
                    words[start : start + size]
                    for size in range(1, _LONGEST + 1)
                    for start in range(len(words) - size + 1)
                )
    return done


def _words(text: str) -> tuple[str, ...]:
    return tuple(_WORD.findall(text.casefold()))


def _covered(spans: list[tuple[int, int]], planted: dict[str, object]) -> bool:
    value, start = str(planted["value"]), int(str(planted["start"]))
    return all(
        any(low <= start + offset < high for low, high in spans)
        for offset, char in enumerate(value)
        if char.isalnum()
    )


def measure(corpus: Sequence[dict[str, object]], detectors: Sequence[PiiDetector]) -> Recall:
    """Recall per kind of the release's scrubber with ``detectors`` over ``corpus``."""
    started = time.process_time()  # CPU: the machine may be shared
    scrubber = Scrubber(
        Pseudonymizer(b"benchmark-salt-0123456789"),
        usernames=(),
        mask_applications=False,
        detectors=detectors,
    )
    identifiers = Identifiers()
    first = _run(scrubber, corpus, identifiers)  # nothing learned yet: the detectors alone
    scrubber.learn(identifiers)
    second = _run(scrubber, corpus, None)
    direct, redacted = first.spans, second.spans
    left = sorted(" ".join(words) for words in second.listed if words[:_LONGEST] in second.released)
    caught: Counter[str] = Counter()
    total: Counter[str] = Counter()
    confirmed: set[str] = set()
    everything = [
        (str(session["session"]), planted)
        for session in corpus
        for planted in session["planted"]  # type: ignore[attr-defined]
    ]
    # A person is confirmed once when a detector found one of their occurrences directly.
    for session_id, planted in everything:
        found = _covered(direct.get((session_id, planted["where"]), []), planted)
        if "person" in planted and found:
            confirmed.add(str(planted["person"]))
    planted_at: dict[tuple[str, str], list[tuple[int, int]]] = {}
    for session_id, planted in everything:
        # A first mention by the detectors alone: after both passes the corpus's first names
        # and surnames, shared by several people, would be found through one another.
        spans = direct if planted["kind"] == "NAME" else redacted
        hit = _covered(spans.get((session_id, planted["where"]), []), planted)
        kinds = [str(planted["kind"])]
        if planted["kind"] == "NAME_RECURRENCE" and planted["person"] in confirmed:
            kinds.append(CONFIRMED)
        for kind in kinds:
            total[kind] += 1
            caught[kind] += hit
        where = (session_id, str(planted["where"]))
        planted_at.setdefault(where, []).append((int(planted["start"]), int(planted["end"])))
    spurious = sum(
        not any(low < end and start < high for start, end in planted_at.get(where, []))
        for where, spans in redacted.items()
        for low, high in spans
    )
    return Recall(caught, total, spurious, left, time.process_time() - started)


def table(results: dict[str, Recall]) -> str:
    names = list(results)
    lines = [
        "| kind | planted | " + " | ".join(names) + " |",
        "|---|---|" + "---|" * len(names),
    ]
    first = results[names[0]]
    for kind in ROWS:
        if kind == CONFIRMED:  # which names are confirmed depends on the detectors
            cells = " | ".join(
                f"{results[n].of(kind):.3f} of {results[n].total[kind]}" for n in names
            )
            lines.append(f"| {kind} | | {cells} |")
            continue
        cells = " | ".join(f"{results[name].of(kind):.3f}" for name in names)
        lines.append(f"| {kind} | {first.total[kind]} | {cells} |")
    lines.append(
        "| spurious redactions | | " + " | ".join(str(results[n].spurious) for n in names) + " |"
    )
    lines.append(
        "| listed, left in clear | | "
        + " | ".join(str(len(results[n].left_in_clear)) for n in names)
        + " |"
    )
    lines.append(
        "| CPU seconds | | " + " | ".join(f"{results[n].seconds:.0f}" for n in names) + " |"
    )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--detector", choices=("regex", "presidio", "both"), default="both")
    parser.add_argument("--sessions", type=int, default=None, help="the first N sessions only")
    args = parser.parse_args()
    corpus = pii_corpus.load()[: args.sessions]
    results: dict[str, Recall] = {}
    if args.detector in ("regex", "both"):
        results["regex core"] = measure(corpus, [])
    if args.detector in ("presidio", "both"):
        from corix.release.presidio import PresidioDetector

        results["regex core + Presidio"] = measure(corpus, [PresidioDetector()])
    print(f"{len(corpus)} sessions")
    print(table(results))


if __name__ == "__main__":
    main()
