"""Security primitives: password hashing and its pool, opaque tokens and CSRF tokens.

Pure helpers with no HTTP in them, so each can be tested on its own.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import secrets
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TypeVar

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError


def new_token() -> str:
    """An unguessable, URL-safe token (256 bits)."""
    return secrets.token_urlsafe(32)


def token_digest(token: str) -> str:
    """What is stored for a secret token: a leaked table does not reveal usable tokens."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class PasswordCheck:
    ok: bool
    new_hash: str | None = None
    """A fresh hash when the stored one used weaker parameters than today's."""


# OWASP's Password Storage Cheat Sheet (2025), first of its equivalent argon2id settings:
# 19 MiB, 2 passes, 1 lane. RFC 9106's "second recommended option" (64 MiB, 3 passes)
# costs about seven times the CPU here (0.19 s of a core against 0.027 s), which a burst of
# a thousand sign-ins on two cores cannot afford; the memory a burst costs is this much per
# hashing thread, whatever the number of people waiting.
PASSWORD_TIME_COST = 2
PASSWORD_MEMORY_KIB = 19 * 1024
PASSWORD_LANES = 1

T = TypeVar("T")


class Passwords:
    """Argon2id password hashing."""

    def __init__(
        self,
        *,
        time_cost: int = PASSWORD_TIME_COST,
        memory_kib: int = PASSWORD_MEMORY_KIB,
        lanes: int = PASSWORD_LANES,
    ) -> None:
        self._hasher = PasswordHasher(
            time_cost=time_cost, memory_cost=memory_kib, parallelism=lanes
        )

    def hash(self, password: str) -> str:
        return self._hasher.hash(password)

    def check(self, stored_hash: str, password: str) -> PasswordCheck:
        try:
            self._hasher.verify(stored_hash, password)
        except (VerificationError, InvalidHashError):
            return PasswordCheck(ok=False)
        if self._hasher.check_needs_rehash(stored_hash):
            return PasswordCheck(ok=True, new_hash=self._hasher.hash(password))
        return PasswordCheck(ok=True)

    def burn(self, password: str) -> None:
        """Spend the time of a check, so an unknown username answers as slowly as a known one."""
        self._hasher.hash(password)


class CsrfTokens:
    """Tokens bound to a per-browser seed (the session token, or an anonymous cookie).

    A token is the HMAC of the seed under the server's key: a forged form from another
    site knows neither the seed (an HttpOnly cookie) nor the key.
    """

    def __init__(self, secret_key: str) -> None:
        self._key = secret_key.encode("utf-8")

    def token_for(self, seed: str) -> str:
        return hmac.new(self._key, seed.encode("utf-8"), hashlib.sha256).hexdigest()

    def valid(self, seed: str | None, token: str | None) -> bool:
        if not seed or not token:
            return False
        return hmac.compare_digest(self.token_for(seed), token)


class HashingBusy(Exception):
    """More people are waiting for a password check than the queue holds."""


class HashingPool:
    """Password hashing on threads of its own, behind a bounded queue.

    argon2 releases the GIL while it hashes, so a burst of sign-ins runs on these threads
    and leaves the threads that serve pages and chat free; at most ``threads`` hashes (and
    their memory) run at once per process. A check that would queue behind more than
    ``max_waiting`` others is refused at once (the page asks to try again in a moment)
    rather than left to time out.
    """

    def __init__(self, *, threads: int, max_waiting: int) -> None:
        self._executor = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="corix-hash")
        self._capacity = threads + max_waiting
        self._pending = 0
        self._lock = threading.Lock()

    @property
    def pending(self) -> int:
        return self._pending

    async def run(self, work: Callable[..., T], *args: object) -> T:
        with self._lock:
            if self._pending >= self._capacity:
                raise HashingBusy()
            self._pending += 1
        try:
            return await asyncio.wrap_future(self._executor.submit(work, *args))
        finally:
            with self._lock:
                self._pending -= 1

    def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)
