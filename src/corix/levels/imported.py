"""Dialogues recorded elsewhere, read as sessions: annotated, scored and reported like any.

Three formats:

* **JSON Lines** — one dialogue per line: ``{"id": …, "messages": [{"role": "user",
  "content": …}, {"role": "assistant", …}, …], "application": …, "scenario": …,
  "level": …}`` (OpenAI's chat ``messages``; ``system`` messages are left out, since
  annotators never see an application's instructions);
* **CSV** — ``conversation_id,turn,role,text`` with ``application``, ``scenario`` and
  ``level`` columns, one row per message, messages ordered by ``turn``;
* **Inspect AI eval logs** (``.eval``, or an Inspect ``.json`` log), read through Inspect's
  own library (the ``inspect`` extra): one dialogue per sample and epoch, the evaluated
  model as the application unless given, scenario and level from each sample's metadata
  or given once for the file.

Each user message and the assistant message after it make a turn; a user message with no
reply makes a turn without one, so the dialogue counts as not measurable if nothing was
answered. ``application``, ``scenario`` and ``level`` may be given once for the whole file
instead. Every problem names the file, the line and the field, and nothing is stored
unless the whole file reads.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from corix.config import jsonl_records, read_config_text, read_csv_rows
from corix.domain import Level
from corix.errors import ConfigError
from corix.scenarios import PACK_FOLDERS

CSV_COLUMNS = ("conversation_id", "turn", "role", "text")
_CONTEXT = ("application", "scenario", "level")

__all__ = ["CSV_COLUMNS", "ImportedDialogue", "read_dialogues"]


@dataclass(frozen=True)
class ImportedDialogue:
    """One dialogue read from a file: ``turns`` pairs a user message with its reply."""

    key: str
    application: str
    scenario: str
    level: Level
    turns: tuple[tuple[str, str | None], ...]
    line: int | None


INSPECT_SUFFIXES = (".eval", ".json")


def read_dialogues(path: Path, defaults: Mapping[str, str | None]) -> list[ImportedDialogue]:
    """Every dialogue of ``path``; ``defaults`` fill context columns."""
    if path.suffix.lower() in INSPECT_SUFFIXES:
        dialogues = list(_from_inspect_log(path, defaults))
        _check_unique(dialogues, path)
        return dialogues
    if path.suffix.lower() == ".csv":
        dialogues = list(_from_csv(path, defaults))
    elif path.suffix.lower() in (".jsonl", ".ndjson"):
        dialogues = [
            _from_messages(record, line, path, defaults)
            for line, record in jsonl_records(read_config_text(path), path)
        ]
    else:
        raise ConfigError(
            "expected a .jsonl or .csv file of dialogues, or an Inspect AI .eval log", path=path
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


def _from_inspect_log(path: Path, defaults: Mapping[str, str | None]) -> Iterable[ImportedDialogue]:
    try:
        from inspect_ai.log import read_eval_log
    except ImportError:
        raise ConfigError(
            "reading Inspect AI logs needs the inspect extra: pip install 'corix[inspect]'",
            path=path,
        ) from None
    try:
        log = read_eval_log(str(path))
    except Exception as exc:  # Inspect raises many kinds; any of them means an unreadable log
        raise ConfigError(f"not a readable Inspect AI eval log: {exc}", path=path) from None
    model = defaults.get("application") or log.eval.model
    for index, sample in enumerate(log.samples or []):
        metadata = dict(sample.metadata or {})
        record = {column: metadata.get(column) for column in _CONTEXT}
        record["application"] = record["application"] or model
        pairs = [
            (str(message.role), message.text)
            for message in sample.messages
            if message.role in ("user", "assistant")
        ]
        field = f"samples.{index}"
        context = _context(record, defaults, path, None, field)
        yield _dialogue(f"{sample.id}#{sample.epoch}", pairs, context, path, None, field)


def _from_messages(
    record: dict[str, Any], line: int, path: Path, defaults: Mapping[str, str | None]
) -> ImportedDialogue:
    messages = record.get("messages")
    if not isinstance(messages, list) or not messages:
        raise ConfigError(
            "expected a non-empty list of messages", path=path, field="messages", line=line
        )
    pairs: list[tuple[str, str]] = []
    for index, message in enumerate(messages):
        field = f"messages.{index}"
        if not isinstance(message, dict):
            raise ConfigError(
                "expected an object with role and content", path=path, field=field, line=line
            )
        role, content = message.get("role"), message.get("content")
        if role not in ("system", "user", "assistant"):
            raise ConfigError(
                f"role must be user, assistant or system, not {role!r}",
                path=path,
                field=f"{field}.role",
                line=line,
            )
        if not isinstance(content, str):
            raise ConfigError(
                "content must be text", path=path, field=f"{field}.content", line=line
            )
        if role != "system":
            pairs.append((role, content))
    key = str(record.get("id") or f"line-{line}")
    return _dialogue(key, pairs, _context(record, defaults, path, line), path, line)


def _from_csv(path: Path, defaults: Mapping[str, str | None]) -> Iterable[ImportedDialogue]:
    table = read_csv_rows(path)
    missing = table.missing(CSV_COLUMNS)
    if missing:
        raise ConfigError(f"missing column '{missing[0]}'", path=path, field=missing[0], line=1)
    rows: dict[str, list[tuple[float, int, dict[str, str]]]] = {}
    for line, row in table.rows:
        try:
            turn = float(row["turn"])
        except (TypeError, ValueError):
            raise ConfigError("turn must be a number", path=path, field="turn", line=line) from None
        rows.setdefault(row["conversation_id"], []).append((turn, line, row))
    for key, found in rows.items():
        found.sort(key=lambda item: item[0])
        first_line = found[0][1]
        pairs = []
        for _turn, line, row in found:
            role = (row.get("role") or "").strip().lower()
            if role not in ("system", "user", "assistant"):
                raise ConfigError(
                    f"role must be user, assistant or system, not {role!r}",
                    path=path,
                    field="role",
                    line=line,
                )
            if role != "system":
                pairs.append((role, row.get("text") or ""))
        context = _context(found[0][2], defaults, path, first_line)
        yield _dialogue(key, pairs, context, path, first_line)


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
    messages: list[tuple[str, str]],
    context: tuple[str, str, Level],
    path: Path,
    line: int | None,
    within: str | None = None,
) -> ImportedDialogue:
    turns: list[tuple[str, str | None]] = []
    for role, content in messages:
        if role == "user":
            turns.append((content, None))
        elif not turns or turns[-1][1] is not None:
            raise ConfigError(
                "an assistant message must answer a user message",
                path=path,
                field=f"{within}.messages" if within else "role",
                line=line,
            )
        else:
            turns[-1] = (turns[-1][0], content)
    if not turns:
        raise ConfigError(
            "the dialogue has no user message",
            path=path,
            field=f"{within}.messages" if within else "messages",
            line=line,
        )
    application, scenario, level = context
    return ImportedDialogue(key, application, scenario, level, tuple(turns), line)
