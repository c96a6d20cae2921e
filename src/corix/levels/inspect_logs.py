"""Inspect AI eval logs read as the JSON they are, without Inspect's library.

An Inspect log is JSON: a ``.json`` log is one document (``version``, ``status``,
``eval``, ``samples``, …); an ``.eval`` log is a zip archive of the same parts
(``header.json``, or ``_journal/start.json`` while the eval runs, and one
``samples/ID_epoch_N.json`` per sample). corix reads both with the standard library, so
importing a log needs no extra and CI reads the committed logs written by the real
inspect-ai. Log format version 2 (inspect-ai 0.3) is read; another version is refused by
name rather than half read.

A sample's messages become corix :class:`~corix.domain.Message` s, nothing dropped: the
system message, user and assistant messages with content as text or a list of parts,
the assistant's tool calls (arguments written back as JSON text) and the tool results
(with the tool's error). Content that Inspect moved to the sample's ``attachments``
(``attachment://…``) is put back. Fields corix does not model (Inspect's message ``id``,
``source``, ``model``, ``metadata``; a tool call's ``parse_error`` or ``view``) are kept in
the message's ``metadata``.
"""

from __future__ import annotations

import json
import struct
import zipfile
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from corix.config import format_location
from corix.domain import JsonObject, Message
from corix.errors import ConfigError

INSPECT_LOG_VERSION = 2
MAX_MEMBER_BYTES = 512 * 1024 * 1024
"""The largest part of an ``.eval`` archive read (uncompressed): a bound on what a
hostile archive can make corix inflate."""
_ATTACHMENT = "attachment://"
_ZIP_ZSTANDARD = 93
"""The zip compression method Inspect writes ``.eval`` archives with."""
_LOCAL_HEADER = struct.Struct("<4s5H3L2H")
_MESSAGE_FIELDS = ("role", "content", "tool_calls", "tool_call_id", "function", "error")


@dataclass(frozen=True, slots=True)
class InspectSample:
    """One sample of a log, read: what corix keeps of it, as Inspect wrote it, and its
    messages."""

    key: str
    """``id#epoch``, as the log writes them: unique within a log."""
    within: str
    """Where the sample is in the log (``samples.3``), for errors."""
    id: str | None
    epoch: int | None
    target: Any
    """As given (a text or a list of texts)."""
    metadata: JsonObject
    scores: JsonObject
    model_usage: JsonObject
    limit: JsonObject | None
    error: JsonObject | None
    messages: list[Message]
    message_usage: dict[str, tuple[int, int]]
    """Input and output tokens of the model call that wrote each assistant message, by the
    message's id."""


@dataclass(frozen=True, slots=True)
class InspectLog:
    """What a log's ``eval`` spec names (model, task, eval id) and its samples, read."""

    model: str | None
    task: str | None
    eval_id: str | None
    samples: list[InspectSample]


def read_inspect_log(path: Path) -> InspectLog:
    """The log at ``path`` (``.eval`` archive or ``.json`` document)."""
    if zipfile.is_zipfile(path):
        header, samples = _from_archive(path)
        spec = _object(header.get("eval"), path, "eval")
    else:
        document = _json(_read_bytes(path), path, "the log")
        _check_version(document, path)
        spec = _object(document.get("eval"), path, "eval")
        samples = _samples(document, path)
    return InspectLog(
        model=_text_or_none(spec.get("model")),
        task=_text_or_none(spec.get("task")),
        eval_id=_text_or_none(spec.get("eval_id")),
        samples=[_sample(sample, path, f"samples.{i}") for i, sample in enumerate(samples)],
    )


def _sample(raw: JsonObject, path: Path, within: str) -> InspectSample:
    epoch = raw.get("epoch")
    return InspectSample(
        key=f"{raw.get('id')}#{epoch}",
        within=within,
        id=_text_or_none(raw.get("id")),
        epoch=epoch if isinstance(epoch, int) else None,
        target=raw.get("target"),
        metadata=_object_or_none(raw.get("metadata")) or {},
        scores=_object_or_none(raw.get("scores")) or {},
        model_usage=_object_or_none(raw.get("model_usage")) or {},
        limit=_object_or_none(raw.get("limit")),
        error=_object_or_none(raw.get("error")),
        messages=_messages(raw, path, within),
        message_usage=_message_usage(raw),
    )


def _object_or_none(value: Any) -> JsonObject | None:
    return value if isinstance(value, dict) and value else None


def _text_or_none(value: Any) -> str | None:
    return None if value is None else str(value)


def _from_archive(path: Path) -> tuple[JsonObject, list[JsonObject]]:
    try:
        with zipfile.ZipFile(path) as archive:
            names = archive.namelist()
            header_name = "header.json" if "header.json" in names else "_journal/start.json"
            if header_name not in names:
                raise ConfigError("an .eval archive without header.json", path=path)
            header = _json(_member(archive, header_name, path), path, header_name)
            _check_version(header, path)
            samples = [
                _json(_member(archive, name, path), path, name)
                for name in names
                if name.startswith("samples/") and name.endswith(".json")
            ]
    except (zipfile.BadZipFile, OSError) as exc:
        raise ConfigError(f"not a readable Inspect AI .eval archive: {exc}", path=path) from None
    return header, samples


def _member(archive: zipfile.ZipFile, name: str, path: Path) -> bytes:
    info = archive.getinfo(name)
    if info.file_size > MAX_MEMBER_BYTES:
        raise ConfigError(
            f"{name} is larger than {MAX_MEMBER_BYTES // 2**20} MiB uncompressed", path=path
        )
    if info.compress_type != _ZIP_ZSTANDARD:
        return archive.read(name)
    # Streamed and cut one byte past the size the archive declares: a frame cannot make
    # corix allocate what its header claims.
    reader = _zstandard(path).ZstdDecompressor().stream_reader(_raw_member(archive, info))
    with reader:
        data = reader.read(info.file_size + 1)
    if len(data) != info.file_size or zlib.crc32(data) != info.CRC:
        raise ConfigError(f"{name} is damaged (its size or checksum does not match)", path=path)
    return bytes(data)


def _raw_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes:
    """The compressed bytes of ``info``, after its local header (zipfile reads only the
    methods it knows, and Zstandard is not one of them before Python 3.14)."""
    handle = archive.fp
    if handle is None:
        raise zipfile.BadZipFile("the archive is closed")
    handle.seek(info.header_offset)
    header = handle.read(_LOCAL_HEADER.size)
    if len(header) != _LOCAL_HEADER.size or header[:4] != b"PK\x03\x04":
        raise zipfile.BadZipFile(f"bad local header for {info.filename}")
    name_length, extra_length = _LOCAL_HEADER.unpack(header)[-2:]
    handle.seek(name_length + extra_length, 1)
    return handle.read(info.compress_size)


def _zstandard(path: Path) -> Any:
    try:
        import zstandard
    except ImportError:
        raise ConfigError(
            "this .eval log is compressed with Zstandard, which needs the zstandard package "
            "(pip install 'corix[inspect]'); or convert it: inspect log convert --to json",
            path=path,
        ) from None
    return zstandard


def _read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read: {exc.strerror}", path=path) from None


def _json(raw: bytes, path: Path, part: str) -> JsonObject:
    try:
        value = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise ConfigError(f"{part} is not valid JSON: {exc}", path=path) from None
    return _object(value, path, part)


def _object(value: Any, path: Path, field: str) -> JsonObject:
    if not isinstance(value, dict):
        raise ConfigError("expected a JSON object", path=path, field=field)
    return value


def _check_version(document: Mapping[str, Any], path: Path) -> None:
    version = document.get("version")
    if version != INSPECT_LOG_VERSION:
        raise ConfigError(
            f"Inspect AI log format version {version!r}; corix reads version "
            f"{INSPECT_LOG_VERSION} (inspect-ai 0.3)",
            path=path,
            field="version",
        )


def _samples(document: Mapping[str, Any], path: Path) -> list[JsonObject]:
    samples = document.get("samples") or []
    if not isinstance(samples, list):
        raise ConfigError("expected a list of samples", path=path, field="samples")
    return [_object(sample, path, f"samples.{i}") for i, sample in enumerate(samples)]


def _messages(sample: Mapping[str, Any], path: Path, within: str) -> list[Message]:
    attachments = sample.get("attachments") or {}
    raw = sample.get("messages") or []
    if not isinstance(raw, list):
        raise ConfigError("expected a list of messages", path=path, field=f"{within}.messages")
    messages = []
    for index, message in enumerate(raw):
        field = f"{within}.messages.{index}"
        try:
            data = _resolved(_object(message, path, field), attachments)
            messages.append(Message.model_validate(_message_fields(data)))
        except RecursionError:
            raise ConfigError("nested too deeply", path=path, field=field) from None
        except ValidationError as exc:
            error = exc.errors()[0]
            where = format_location((field, *error["loc"]))
            raise ConfigError(error["msg"], path=path, field=where) from None
    return messages


def _message_usage(sample: Mapping[str, Any]) -> dict[str, tuple[int, int]]:
    """Inspect's model events name the message their output became."""
    usage: dict[str, tuple[int, int]] = {}
    for event in sample.get("events") or []:
        if not isinstance(event, dict) or event.get("event") != "model":
            continue
        output = event.get("output")
        if not isinstance(output, dict) or not isinstance(output.get("usage"), dict):
            continue
        tokens = output["usage"]
        for choice in output.get("choices") or []:
            message = choice.get("message") if isinstance(choice, dict) else None
            if isinstance(message, dict) and isinstance(message.get("id"), str):
                counts = (tokens.get("input_tokens"), tokens.get("output_tokens"))
                usage[message["id"]] = (_count(counts[0]), _count(counts[1]))
    return usage


def _count(value: Any) -> int:
    return value if isinstance(value, int) and value >= 0 else 0


def _message_fields(data: Mapping[str, Any]) -> JsonObject:
    """An Inspect message in corix's fields; what corix does not model goes to metadata."""
    fields: JsonObject = {"role": data.get("role"), "content": data.get("content")}
    metadata = {key: value for key, value in data.items() if key not in _MESSAGE_FIELDS}
    calls = data.get("tool_calls")
    if isinstance(calls, list) and calls:
        fields["tool_calls"] = [_tool_call(call) for call in calls]
        extras = {
            call.get("id"): {k: v for k, v in call.items() if k in ("parse_error", "view") and v}
            for call in calls
            if isinstance(call, dict)
        }
        if any(extras.values()):
            metadata["tool_call_extras"] = {k: v for k, v in extras.items() if v}
    if data.get("role") == "tool":
        fields["tool_call_id"] = data.get("tool_call_id")
        fields["name"] = data.get("function")
        error = data.get("error")
        if isinstance(error, dict):
            fields["error"] = f"{error.get('type')}: {error.get('message')}"
    if metadata:
        fields["metadata"] = metadata
    return fields


def _tool_call(call: Any) -> Any:
    if not isinstance(call, dict):
        return call  # left to validation, which names what is wrong
    arguments = call.get("arguments")
    return {
        "id": call.get("id"),
        "name": call.get("function"),
        # Inspect keeps the arguments parsed; corix keeps the JSON text a model writes.
        "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments),
        "type": call.get("type") or "function",
    }


def _resolved(value: Any, attachments: Mapping[str, Any]) -> Any:
    """``value`` with every ``attachment://ID`` string replaced by the attachment's text."""
    if isinstance(value, str) and value.startswith(_ATTACHMENT):
        return attachments.get(value[len(_ATTACHMENT) :], value)
    if isinstance(value, dict):
        return {key: _resolved(item, attachments) for key, item in value.items()}
    if isinstance(value, list):
        return [_resolved(item, attachments) for item in value]
    return value
