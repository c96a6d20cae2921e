"""Importing human labels into a run as passes, all or nothing.

A label file is CSV (header ``session_id,category,question_id,annotator,value`` plus the
optional ``turn_index``, ``reasoning`` and ``pass_no``) or JSONL (one object per line with
the same keys). Each (session, category, annotator, pass) becomes one human pass. A harm
judgment is category ``harm:<pack>`` with question ``severity``. Rows with an empty value
are skipped answers.

Everything is checked before anything is stored: the session belongs to the run, the
category and question exist, the values fit the schema (follow-ups, ranges, required
answers), and no such pass is stored yet. Every problem is reported with the file and
line it comes from; only a clean file is stored, in one transaction.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from corix.assessment.annotators import SEVERITY, AnnotatorKind, harm_of
from corix.assessment.answers import (
    Answer,
    AnswerValidationError,
    answer_records,
    validate_answers,
)
from corix.assessment.harms import HarmPack, builtin_harm_packs
from corix.assessment.schema import AnnotationSchema, load_builtin_schema
from corix.config import jsonl_records, read_config_text, read_csv_rows
from corix.domain import JsonObject
from corix.errors import ConfigError, CorixError
from corix.storage import Database, NewPass, get_run, insert_passes, pass_keys, session_infos

REQUIRED_COLUMNS = ("session_id", "category", "question_id", "annotator", "value")
OPTIONAL_COLUMNS = ("turn_index", "reasoning", "pass_no")
JSONL_SUFFIXES = (".jsonl", ".ndjson")
_SHOWN_PROBLEMS = 30


class LabelImportError(CorixError):
    """A label file has problems; none of it was stored."""

    def __init__(self, path: Path, problems: list[tuple[int, str]]) -> None:
        self.path = path
        self.problems = problems
        shown = [f"  {path}:{line}: {message}" for line, message in problems[:_SHOWN_PROBLEMS]]
        more = len(problems) - _SHOWN_PROBLEMS
        if more > 0:
            shown.append(f"  … and {more} more")
        super().__init__(
            f"{len(problems)} problem(s) in {path}; nothing was imported:\n" + "\n".join(shown)
        )


class ImportSummary(BaseModel):
    path: str
    run_id: str
    passes: int
    answers: int
    annotators: list[str]


@dataclass
class _Pass:
    session_id: str
    category: str
    annotator: str
    pass_no: int
    answers: list[tuple[int, Answer]] = field(default_factory=list)

    @property
    def first_line(self) -> int:
        return min(line for line, _ in self.answers)


def _records(path: Path) -> list[tuple[int, JsonObject]]:
    if path.suffix in JSONL_SUFFIXES:
        return jsonl_records(read_config_text(path), path)
    table = read_csv_rows(path)
    if table.missing(REQUIRED_COLUMNS):
        raise ConfigError(
            f"missing column(s) {', '.join(table.missing(REQUIRED_COLUMNS))}; expected "
            f"{','.join(REQUIRED_COLUMNS)} and optionally {','.join(OPTIONAL_COLUMNS)}",
            path=path,
            line=1,
        )
    return [(line, dict(record)) for line, record in table.rows]


def _text(record: Mapping[str, Any], key: str) -> str:
    value = record.get(key)
    return "" if value is None else str(value).strip()


def _optional_int(record: Mapping[str, Any], key: str, default: int | None) -> int | None:
    raw = _text(record, key)
    if not raw:
        return default
    try:
        number = int(raw)
    except ValueError:
        raise ValueError(f"{key}: expected a whole number, got {raw!r}") from None
    if number < 0:
        raise ValueError(f"{key}: must be 0 or more, got {number}")
    return number


class _Importer:
    def __init__(
        self,
        db: Database,
        run_id: str,
        path: Path,
        schema: AnnotationSchema,
        packs: Mapping[str, HarmPack],
    ) -> None:
        self.db = db
        self.run_id = run_id
        self.path = path
        self.schema = schema
        self.packs = packs
        self.infos = session_infos(db, run_id)
        self.problems: list[tuple[int, str]] = []
        self.passes: dict[tuple[str, str, str, int], _Pass] = {}

    def read(self) -> None:
        for line, record in _records(self.path):
            try:
                self._add(line, record)
            except ValueError as exc:
                self.problems.append((line, str(exc)))

    def _add(self, line: int, record: Mapping[str, Any]) -> None:
        missing = [c for c in REQUIRED_COLUMNS if c != "value" and not _text(record, c)]
        if missing:
            raise ValueError(f"missing {', '.join(missing)}")
        raw_value = record.get("value")
        if raw_value is None or (isinstance(raw_value, str) and not raw_value.strip()):
            return  # a skipped answer
        session_id = _text(record, "session_id")
        if session_id not in self.infos:
            raise ValueError(
                f"session '{session_id}' is not a complete session of run {self.run_id}"
            )
        category = _text(record, "category")
        self._check_category(category, _text(record, "question_id"))
        value = raw_value.strip() if isinstance(raw_value, str) else raw_value
        reasoning = _text(record, "reasoning") or None
        answer = Answer(
            question_id=_text(record, "question_id"),
            turn_index=_optional_int(record, "turn_index", None),
            value=value,
            reasoning=reasoning,
        )
        pass_no = _optional_int(record, "pass_no", 0) or 0
        key = (session_id, category, _text(record, "annotator"), pass_no)
        entry = self.passes.setdefault(key, _Pass(*key))
        entry.answers.append((line, answer))

    def _check_category(self, category: str, question_id: str) -> None:
        harm = harm_of(category)
        if harm is not None:
            if harm not in self.packs:
                raise ValueError(f"unknown harm pack '{harm}' (known: {', '.join(self.packs)})")
            if question_id != SEVERITY:
                raise ValueError(f"a harm label answers '{SEVERITY}', not '{question_id}'")
            return
        try:
            self.schema.category(category)
        except CorixError as exc:
            raise ValueError(str(exc)) from None

    def validate(self) -> list[NewPass]:
        stored = pass_keys(self.db, self.run_id)
        passes = []
        for key, entry in self.passes.items():
            if (*key, 0) in stored:
                self.problems.append(
                    (
                        entry.first_line,
                        f"annotator '{entry.annotator}' already has pass {entry.pass_no} of "
                        f"'{entry.category}' for session '{entry.session_id}' stored",
                    )
                )
                continue
            answers = self._checked(entry)
            if answers is not None:
                passes.append(self._new_pass(entry, answers))
        return passes

    def _checked(self, entry: _Pass) -> list[Answer] | None:
        lines = {answer.key: line for line, answer in entry.answers}
        answers = [answer for _, answer in entry.answers]
        harm = harm_of(entry.category)
        if harm is not None:
            return self._checked_severity(entry, self.packs[harm])
        try:
            return validate_answers(
                self.schema, entry.category, answers, self.infos[entry.session_id].n_turns
            )
        except AnswerValidationError as exc:
            for problem in exc.problems:
                line = lines.get((problem.question_id, problem.turn_index), entry.first_line)
                self.problems.append((line, f"{entry.category}, {problem}"))
            return None

    def _checked_severity(self, entry: _Pass, pack: HarmPack) -> list[Answer] | None:
        line, answer = entry.answers[0]
        if len(entry.answers) > 1:
            self.problems.append((entry.answers[1][0], f"{SEVERITY}: answered more than once"))
            return None
        try:
            severity = float(str(answer.value))
        except ValueError:
            self.problems.append((line, f"{SEVERITY}: expected a number, got {answer.value!r}"))
            return None
        if not severity.is_integer() or not pack.scale.contains(severity):
            self.problems.append(
                (
                    line,
                    f"{SEVERITY}: {severity:g} is not a whole number on the "
                    f"'{pack.id}' scale {pack.scale.min}–{pack.scale.max}",
                )
            )
            return None
        return [answer.model_copy(update={"value": severity, "turn_index": None})]

    def _new_pass(self, entry: _Pass, answers: list[Answer]) -> NewPass:
        return NewPass(
            session_id=entry.session_id,
            category=entry.category,
            annotator=entry.annotator,
            annotator_kind=AnnotatorKind.HUMAN.value,
            pass_no=entry.pass_no,
            repeat_no=0,
            ok=True,
            error=None,
            provenance={"source": "import", "file": self.path.name, "line": entry.first_line},
            answers=answer_records(answers),
        )


def import_labels(
    db: Database,
    run_id: str,
    path: Path,
    *,
    schema: AnnotationSchema | None = None,
    packs: Mapping[str, HarmPack] | None = None,
) -> ImportSummary:
    """Check every label in ``path`` against run ``run_id``, then store them all as passes.

    Raises :class:`LabelImportError` listing each problem by line, or ``ConfigError`` for a
    file that cannot be read at all; in both cases nothing is stored.
    """
    get_run(db, run_id)
    importer = _Importer(
        db,
        run_id,
        path,
        schema or load_builtin_schema(),
        packs if packs is not None else builtin_harm_packs(),
    )
    importer.read()
    passes = importer.validate()
    if importer.problems:
        raise LabelImportError(path, sorted(importer.problems))
    insert_passes(db, passes)
    return ImportSummary(
        path=str(path),
        run_id=run_id,
        passes=len(passes),
        answers=sum(len(new.answers) for new in passes),
        annotators=sorted({entry.annotator for entry in importer.passes.values()}),
    )
