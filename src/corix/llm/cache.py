"""An on-disk response cache in one SQLite file, keyed by a digest of the full request.

Rule: every successful reply is cached, whatever the temperature. A request served from
the cache is identical in everything that can change an answer (endpoint, model,
messages, sampling parameters, seed, response format, extra parameters), so callers
that want several different samples of the same prompt pass distinct seeds. This keeps
reruns free and reproducible.

Operations run synchronously on the event loop: each is one statement on the primary
key, tens of microseconds, cheaper than a hop to a worker thread, and no two of them
interleave. WAL journaling lets several processes share the file.

A reply is returned exactly as it came, hostile bytes included: text SQLite cannot hold
as TEXT (a lone surrogate is not UTF-8) is stored as its ``surrogatepass`` bytes in the
same column and decoded back on the way out. Tool calls and a refusal come back too, so an
agent's rerun asks no model again either; a cache file written before they were kept gains
their columns when opened.
"""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from types import TracebackType

from corix.domain import EndpointConfig, ToolCall
from corix.llm.hashing import request_digest
from corix.llm.models import ChatRequest
from corix.llm.transport import RawCompletion

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    text TEXT NOT NULL,
    model TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    created_at REAL NOT NULL,
    tool_calls TEXT,
    refusal TEXT
) WITHOUT ROWID
"""
_ADDED_COLUMNS = ("tool_calls", "refusal")
"""Columns later versions added: an older file gets them (NULL: a plain reply)."""


def cache_key(request: ChatRequest, endpoint: EndpointConfig) -> str:
    """The cache key of a request whose model is already resolved against ``endpoint``."""
    return request_digest(request, scope=f"{endpoint.transport}:{endpoint.base_url}")


def _to_column(text: str) -> str | bytes:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass")
    return text


def _from_column(value: str | bytes) -> str:
    return value.decode("utf-8", "surrogatepass") if isinstance(value, bytes) else value


class ResponseCache:
    """Successful replies by request key, in the SQLite file at ``path``."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # Autocommit: each put is its own tiny transaction, visible to other processes.
        self._db = sqlite3.connect(self.path, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        # With WAL, NORMAL skips the fsync per commit; a crash loses only recent entries.
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute("PRAGMA busy_timeout=5000")
        self._db.execute(_SCHEMA)
        present = {row[1] for row in self._db.execute("PRAGMA table_info(responses)")}
        for column in _ADDED_COLUMNS:
            if column not in present:
                self._db.execute(f"ALTER TABLE responses ADD COLUMN {column} TEXT")

    def get(self, key: str) -> RawCompletion | None:
        row = self._db.execute(
            "SELECT text, model, prompt_tokens, completion_tokens, tool_calls, refusal "
            "FROM responses WHERE key = ?",
            (key,),
        ).fetchone()
        if row is None:
            return None
        calls = json.loads(_from_column(row[4])) if row[4] is not None else []
        return RawCompletion(
            text=_from_column(row[0]),
            model=_from_column(row[1]),
            prompt_tokens=row[2],
            completion_tokens=row[3],
            tool_calls=tuple(ToolCall.model_validate(call) for call in calls),
            refusal=_from_column(row[5]) if row[5] is not None else None,
        )

    def put(self, key: str, completion: RawCompletion) -> None:
        calls = [call.model_dump() for call in completion.tool_calls]
        self._db.execute(
            "INSERT OR REPLACE INTO responses (key, text, model, prompt_tokens, "
            "completion_tokens, created_at, tool_calls, refusal) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                key,
                _to_column(completion.text),
                _to_column(completion.model),
                completion.prompt_tokens,
                completion.completion_tokens,
                time.time(),
                _to_column(json.dumps(calls, ensure_ascii=False)) if calls else None,
                None if completion.refusal is None else _to_column(completion.refusal),
            ),
        )

    def __len__(self) -> int:
        (count,) = self._db.execute("SELECT COUNT(*) FROM responses").fetchone()
        return int(count)

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> ResponseCache:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()
