"""Dialogues recorded elsewhere, read as sessions: annotated, scored and reported like any.

Three formats, each stored as given (docs/formats.md):

* **JSON Lines** — one dialogue per line: ``{"id": …, "messages": […], "application": …,
  "scenario": …, "level": …}``, ``messages`` in OpenAI's chat format in any of its current
  shapes: system and developer messages, content as text or a list of parts, assistant
  tool calls (content ``null``), ``tool`` results, an assistant speaking first, several
  messages of one role in a row. Other keys of the line are kept as the source's metadata;
* **CSV** — ``conversation_id,turn,role,text`` with ``application``, ``scenario`` and
  ``level`` columns, one row per message ordered by ``turn``; optional ``tool_calls``
  (OpenAI's JSON list), ``tool_call_id`` and ``name`` columns; other columns are kept in the
  message's metadata;
* **Inspect AI eval logs** (``.eval``, or an Inspect ``.json`` log; :mod:`inspect_logs`):
  one dialogue per sample and epoch, the evaluated model as the application unless given,
  scenario and level from each sample's metadata or given once for the file. A sample's
  scores, token usage, metadata, target, limit and error are kept in the provenance; a
  sample that errored is stored as failed with Inspect's error (never measured), one a
  message limit stopped as ended at its turn limit.

The messages are split into turns (:func:`corix.domain.split_turns`). ``application``,
``scenario`` and ``level`` may be given once for the whole file instead. Every problem
names the file, the line and the field, and nothing is stored unless the whole file reads.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from corix.config import format_location, jsonl_records, read_config_text, read_csv_rows
from corix.domain import EndReason, ImportedSource, JsonObject, Level, Message, MessageRole
from corix.errors import ConfigError
from corix.levels.inspect_logs import read_inspect_log
from corix.scenarios import PACK_FOLDERS

CSV_COLUMNS = ("conversation_id", "turn", "role", "text")
_CONTEXT = ("application", "scenario", "level")
_CSV_MESSAGE_COLUMNS = ("tool_calls", "tool_call_id", "name")
INSPECT_SUFFIXES = (".eval", ".json")
_INSTRUCTIONS = (MessageRole.SYSTEM, MessageRole.DEVELOPER)

__all__ = ["CSV_COLUMNS", "ImportedDialogue", "read_dialogues"]


@dataclass(frozen=True)
class ImportedDialogue:
    """One dialogue read from a file: its messages in order, as the file gave them."""

    key: str
    application: str
    scenario: str
    level: Level
    messages: tuple[Message, ...]
    source: ImportedSource
    end_reason: EndReason = EndReason.USER_ENDED
    end_detail: str | None = None
    warnings: tuple[str, ...] = ()
    message_usage: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    """Prompt and completion tokens of the call that wrote an assistant message, by the
    message's id in its source (``metadata["id"]``): Inspect AI logs record them."""

    @property
    def line(self) -> int | None:
        return self.source.line

    @property
    def system_prompt(self) -> str | None:
        """The system and developer messages' texts: what configured the application."""
        texts = [m.text for m in self.messages if m.role in _INSTRUCTIONS]
        return "\n\n".join(texts) if texts else None


def read_dialogues(path: Path, defaults: Mapping[str, str | None]) -> list[ImportedDialogue]:
    """Every dialogue of ``path``; ``defaults`` fill context columns."""
    suffix = path.suffix.lower()
    if suffix in INSPECT_SUFFIXES:
        dialogues = list(_from_inspect_log(path, defaults))
    elif suffix == ".csv":
        dialogues = list(_from_csv(path, defaults))
    elif suffix in (".jsonl", ".ndjson"):
        dialogues = [
            _from_json_line(record, line, path, defaults)
            for line, record in jsonl_records(read_config_text(path), path)
        ]
    else:
        raise ConfigError(
            "expected a .jsonl or .csv file of dialogues, or an Inspect AI .eval or .json log",
            path=path,
        )
    _check_unique(dialogues, path)
    return dialogues


def _check_unique(dialogues: list[ImportedDialogue], path: Path) -> None:
    if not dialogues:
        raise ConfigError("the file holds no dialogues", path=path)
    keys: dict[str, int | None] = {}
    for dialogue in dialogues:
        if dialogue.key in keys:
            raise ConfigError(
                f"dialogue '{dialogue.key}' appears twice (first on line {keys[dialogue.key]})",
                path=path,
                field="id",
                line=dialogue.line,
            )
        keys[dialogue.key] = dialogue.line


# -- Inspect AI -------------------------------------------------------------------------------


def _from_inspect_log(path: Path, defaults: Mapping[str, str | None]) -> Iterable[ImportedDialogue]:
    log = read_inspect_log(path)
    for sample in log.samples:
        metadata = sample.metadata
        record = {column: metadata.get(column) for column in _CONTEXT}
        record["application"] = defaults.get("application") or record["application"] or log.model
        context = _context(record, defaults, path, None, sample.within)
        error, limit = sample.error, sample.limit
        source = ImportedSource(
            format="inspect",
            file=path.name,
            task=log.task,
            eval_id=log.eval_id,
            sample_id=sample.id,
            epoch=sample.epoch,
            target=sample.target,
            metadata=metadata,
            scores=sample.scores,
            usage=sample.model_usage,
            limit=limit,
            error={k: error.get(k) for k in ("message", "traceback")} if error else None,
        )
        end_reason, detail = EndReason.USER_ENDED, None
        if error:
            end_reason, detail = EndReason.SOURCE_ERROR, str(error.get("message") or "error")
        elif limit:
            detail = str(limit.get("reason") or f"{limit.get('type')} limit {limit.get('limit')}")
            if limit.get("type") == "message":
                end_reason = EndReason.TURN_LIMIT
        dialogue = _dialogue(
            sample.key, sample.messages, context, source, path, sample.within, end_reason, detail
        )
        yield dataclasses.replace(dialogue, message_usage=sample.message_usage)


# -- JSON Lines -------------------------------------------------------------------------------


def _from_json_line(
    record: JsonObject, line: int, path: Path, defaults: Mapping[str, str | None]
) -> ImportedDialogue:
    raw = record.get("messages")
    if not isinstance(raw, list) or not raw:
        raise ConfigError(
            "expected a non-empty list of messages", path=path, field="messages", line=line
        )
    messages = [
        _openai_message(message, path, f"messages.{index}", line)
        for index, message in enumerate(raw)
    ]
    key = str(record.get("id") or f"line-{line}")
    source = ImportedSource(
        format="openai_jsonl",
        file=path.name,
        line=line,
        metadata={k: v for k, v in record.items() if k not in ("id", "messages", *_CONTEXT)},
    )
    return _dialogue(key, messages, _context(record, defaults, path, line), source, path)


def _openai_message(data: Any, path: Path, field: str | None, line: int) -> Message:
    """``data`` as a message; ``field`` is its place in a JSON line, ``None`` a CSV row's."""
    if not isinstance(data, dict):
        raise ConfigError(
            "expected an object with role and content", path=path, field=field, line=line
        )
    try:
        return Message.from_openai(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        loc, problem = _openai_location(tuple(error["loc"])), _message_problem(error)
        if field is None:  # a CSV row: name the column
            column = str(loc[0]) if loc else "role"
            where = "text" if column == "content" else column
        else:
            where = format_location((field, *loc))
        raise ConfigError(problem, path=path, field=where, line=line) from None


def _openai_location(loc: tuple[str | int, ...]) -> tuple[str | int, ...]:
    """A validation error's place in the file's terms: a tool call's ``name`` and
    ``arguments`` are under its ``function``; content is one field, whatever its type."""
    if loc[:1] == ("content",):
        return loc[:1]
    if loc[:1] == ("tool_calls",) and len(loc) > 2 and loc[2] in ("name", "arguments"):
        return (*loc[:2], "function", *loc[2:])
    return loc


def _message_problem(error: Any) -> str:
    if error["loc"][:1] == ("role",):
        roles = ", ".join(role.value for role in MessageRole)
        return f"role must be one of {roles}, not {error.get('input')!r}"
    if error["loc"][:1] == ("content",):
        return "content must be text, a list of content parts, or null"
    return str(error["msg"])


# -- CSV --------------------------------------------------------------------------------------


def _from_csv(path: Path, defaults: Mapping[str, str | None]) -> Iterable[ImportedDialogue]:
    table = read_csv_rows(path)
    missing = table.missing(CSV_COLUMNS)
    if missing:
        raise ConfigError(f"missing column '{missing[0]}'", path=path, field=missing[0], line=1)
    rows: dict[str, list[tuple[float, int, dict[str, str]]]] = {}
    for line, row in table.rows:
        try:
            turn = float(row["turn"])
        except ValueError:
            raise ConfigError("turn must be a number", path=path, field="turn", line=line) from None
        rows.setdefault(row["conversation_id"], []).append((turn, line, row))
    for key, found in rows.items():
        found.sort(key=lambda item: item[0])
        first_line = found[0][1]
        messages = [_csv_message(row, path, line) for _turn, line, row in found]
        context = _context(found[0][2], defaults, path, first_line)
        source = ImportedSource(format="csv", file=path.name, line=first_line)
        yield _dialogue(key, messages, context, source, path)


def _csv_message(row: Mapping[str, str], path: Path, line: int) -> Message:
    data: JsonObject = {"role": row["role"].strip().lower(), "content": row["text"]}
    for column in _CSV_MESSAGE_COLUMNS:
        if row.get(column, "").strip():
            data[column] = row[column].strip()
    if "tool_calls" in data:
        try:
            data["tool_calls"] = json.loads(data["tool_calls"])
        except json.JSONDecodeError as exc:
            raise ConfigError(
                f"not valid JSON: {exc.msg}", path=path, field="tool_calls", line=line
            ) from None
        if data["content"] == "":
            data["content"] = None  # a tool-calling message without text, as OpenAI has it
    known = {*CSV_COLUMNS, *_CSV_MESSAGE_COLUMNS, *_CONTEXT}
    extra = {column: value for column, value in row.items() if column not in known and value}
    message = _openai_message(data, path, None, line)
    return message.model_copy(update={"metadata": extra}) if extra else message


# -- shared -----------------------------------------------------------------------------------


def _context(
    record: Mapping[str, Any],
    defaults: Mapping[str, str | None],
    path: Path,
    line: int | None,
    within: str | None = None,
) -> tuple[str, str, Level]:
    """Application, scenario and level; ``within`` prefixes the field a problem names."""
    values = {}
    for column in _CONTEXT:
        value = record.get(column) or defaults.get(column)
        if not value:
            raise ConfigError(
                f"no {column}: give it in the file or with --{column}",
                path=path,
                field=f"{within}.{column}" if within else column,
                line=line,
            )
        values[column] = str(value)
    if values["scenario"] not in PACK_FOLDERS:
        raise ConfigError(
            PACK_FOLDERS.unknown_message(values["scenario"]),
            path=path,
            field=f"{within}.scenario" if within else "scenario",
            line=line,
        )
    try:
        level = Level(values["level"])
    except ValueError:
        known = ", ".join(level.value for level in Level)
        raise ConfigError(
            f"unknown level '{values['level']}'; known: {known}",
            path=path,
            field=f"{within}.level" if within else "level",
            line=line,
        ) from None
    return values["application"], values["scenario"], level


def _dialogue(
    key: str,
    messages: list[Message],
    context: tuple[str, str, Level],
    source: ImportedSource,
    path: Path,
    within: str | None = None,
    end_reason: EndReason = EndReason.USER_ENDED,
    end_detail: str | None = None,
) -> ImportedDialogue:
    where = f"{path}, {within or f'line {source.line}'}"
    warnings = []
    if not any(m.role is MessageRole.USER for m in messages):
        warnings.append(
            f"{where}: dialogue '{key}' has no user message; it is stored as given, "
            "but a measurement judges replies to a user"
        )
    application, scenario, level = context
    return ImportedDialogue(
        key,
        application,
        scenario,
        level,
        tuple(messages),
        source,
        end_reason,
        end_detail,
        tuple(warnings),
    )
