"""The run file (``corix export RUN --format corix``), written and read back.

A JSON Lines file: the :class:`~corix.domain.RunDocument` on the first line, then one
:class:`~corix.domain.SessionLine` per session (see docs/formats.md). Lines are split on
``\\n`` alone, so a reply holding U+2028 or a form feed stays one line. Importing checks
the format and its version, every line against the records, that each line's ``messages``
are its turns' (a file edited on one side only is refused), that no session appears twice
and that as many sessions follow as the header announces; then the run is stored whole or
not at all (:func:`corix.storage.restore_run`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

from pydantic import BaseModel, ValidationError

from corix.config import format_location
from corix.domain import (
    RUN_FILE_FORMAT,
    RUN_FILE_VERSION,
    ArchivedSession,
    JsonObject,
    RunDocument,
    SessionLine,
    TurnRecord,
)
from corix.errors import ConfigError
from corix.report.progress import UNWATCHED, Progress
from corix.storage import (
    Database,
    RestoredRun,
    iter_archived_sessions,
    restore_run,
    run_document,
)

__all__ = ["import_run_file", "is_run_file", "openai_messages", "run_file_lines"]

ModelT = TypeVar("ModelT", bound=BaseModel)


def openai_messages(turns: Sequence[TurnRecord]) -> list[JsonObject]:
    """The turns as OpenAI chat messages, every step in order: system and developer
    messages, the user's, the assistant's with its tool calls, tool results (a plain turn
    is its user text, then its reply when there is one)."""
    return [message.to_openai() for turn in turns for message in turn.steps]


def run_file_lines(db: Database, run_id: str, progress: Progress = UNWATCHED) -> Iterator[str]:
    """The run file of ``run_id``, a line at a time (without line ends); sessions stream."""
    document = run_document(db, run_id)
    progress.planned(document.sessions)
    yield document.model_dump_json()
    for session in iter_archived_sessions(db, run_id):
        yield SessionLine(messages=openai_messages(session.turns), corix=session).model_dump_json()
        progress.advance()


def is_run_file(path: Path) -> bool:
    """Whether ``path`` opens with a run file's header (any version)."""
    try:
        with path.open("rb") as handle:
            header = json.loads(handle.readline().decode("utf-8"))
    except (OSError, ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
        return False
    return isinstance(header, dict) and header.get("format") == RUN_FILE_FORMAT


def import_run_file(db: Database, path: Path) -> RestoredRun:
    """Store the run ``path`` holds, all of it or nothing."""
    try:
        handle = path.open("rb")  # lines end at b"\n" alone
    except OSError as exc:
        raise ConfigError(f"cannot read the file: {exc.strerror}", path=path) from None
    with handle:
        lines = _numbered_lines(handle, path)
        first = next(lines, None)
        if first is None:
            raise ConfigError("the file is empty", path=path)
        document = _header(path, *first)
        return restore_run(db, document, _sessions(path, document, lines))


def _numbered_lines(handle: BinaryIO, path: Path) -> Iterator[tuple[int, Any]]:
    """Each non-blank line's number and JSON object."""
    for number, raw in enumerate(handle, start=1):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ConfigError(
                f"not UTF-8 text (byte {raw[exc.start]:#04x})", path=path, line=number
            ) from None
        if not text.strip():
            continue
        try:
            record = json.loads(text, parse_constant=_no_constant)
        except ValueError as exc:
            raise ConfigError(f"not valid JSON: {exc}", path=path, line=number) from None
        except RecursionError:
            raise ConfigError("not valid JSON: nested too deeply", path=path, line=number) from None
        if not isinstance(record, dict):
            raise ConfigError("expected a JSON object", path=path, line=number)
        yield number, record


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")


def _header(path: Path, line: int, record: JsonObject) -> RunDocument:
    if record.get("format") != RUN_FILE_FORMAT:
        raise ConfigError(
            f"not a corix run file: the first line's format is not '{RUN_FILE_FORMAT}'",
            path=path,
            field="format",
            line=line,
        )
    version = record.get("version")
    if version != RUN_FILE_VERSION:
        newer = isinstance(version, int) and version > RUN_FILE_VERSION
        hint = ": it was written by a newer corix; upgrade to import it" if newer else ""
        raise ConfigError(
            f"run file version {version!r} is not one this corix reads ({RUN_FILE_VERSION}){hint}",
            path=path,
            field="version",
            line=line,
        )
    return _validated(RunDocument, record, path, line)


def _sessions(
    path: Path, document: RunDocument, lines: Iterator[tuple[int, Any]]
) -> Iterator[ArchivedSession]:
    seen: dict[str, int] = {}
    applications = {application.name for application in document.applications}
    for line, record in lines:
        found = _validated(SessionLine, record, path, line)
        session = found.corix
        if session.application not in applications:
            raise ConfigError(
                f"application '{session.application}' is not among the header's applications",
                path=path,
                field="corix.application",
                line=line,
            )
        if list(found.messages) != openai_messages(session.turns):
            raise ConfigError(
                "the messages are not the session's turns (edited on one side only?)",
                path=path,
                field="messages",
                line=line,
            )
        if session.id in seen:
            raise ConfigError(
                f"session '{session.id}' appears twice (first on line {seen[session.id]})",
                path=path,
                field="corix.id",
                line=line,
            )
        seen[session.id] = line
        yield session
    if len(seen) != document.sessions:
        raise ConfigError(
            f"the header announces {document.sessions} sessions but {len(seen)} follow "
            "(is the file cut short?)",
            path=path,
            field="sessions",
            line=1,
        )


def _validated(model: type[ModelT], record: JsonObject, path: Path, line: int) -> ModelT:
    try:
        return model.model_validate(record)
    except ValidationError as exc:
        error = exc.errors()[0]
        raise ConfigError(
            error["msg"], path=path, field=format_location(tuple(error["loc"])), line=line
        ) from None
