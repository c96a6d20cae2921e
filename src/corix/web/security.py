"""Security primitives: password hashing and its pool, opaque tokens and CSRF tokens.

Pure helpers with no HTTP in them, so each can be tested on its own.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import math
import secrets
import threading
import time
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


_FIRST_HASH_S = 0.2
"""What a hash is assumed to take until this process has timed one (argon2 at corix's
defaults: 0.1–0.2 s of one core here)."""
_HASH_S_WEIGHT = 0.2


class HashingBusy(Exception):
    """A password check would wait longer than the pool allows: try again in ``retry_s``."""

    def __init__(self, retry_s: int) -> None:
        super().__init__(f"password checks are busy; retry in {retry_s} s")
        self.retry_s = retry_s


class HashingPool:
    """Password hashing on threads of its own, refused once the wait would be too long.

    argon2 releases the GIL while it hashes, so a burst of sign-ins runs on these threads
    and leaves the threads that serve pages and chat free; at most ``threads`` hashes (and
    their memory) run at once per process. A check is refused at once, with the wait it
    would have had, when that wait exceeds ``max_wait_s`` (the hashes ahead of it times
    the time a hash has been taking *here*, which on a loaded host is many times the
    nominal 0.1–0.2 s) or when ``max_waiting`` checks already wait; a person is told to
    retry in so many seconds instead of watching a page load for half a minute.
    """

    def __init__(self, *, threads: int, max_waiting: int, max_wait_s: float = 3.0) -> None:
        self._executor = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="corix-hash")
        self._threads = threads
        self._capacity = threads + max_waiting
        self._max_wait_s = max_wait_s
        self._hash_s = _FIRST_HASH_S
        self._pending = 0
        self._lock = threading.Lock()

    @property
    def pending(self) -> int:
        return self._pending

    def expected_wait_s(self) -> float:
        """How long a check asked for now would wait before its hash starts."""
        ahead = self._pending - self._threads + 1
        return max(0, ahead) * self._hash_s / self._threads

    async def run(self, work: Callable[..., T], *args: object) -> T:
        with self._lock:
            wait_s = self.expected_wait_s()
            if self._pending >= self._capacity or wait_s > self._max_wait_s:
                raise HashingBusy(max(1, math.ceil(wait_s)))
            self._pending += 1
        try:
            return await asyncio.wrap_future(self._executor.submit(self._timed, work, *args))
        finally:
            with self._lock:
                self._pending -= 1

    def _timed(self, work: Callable[..., T], *args: object) -> T:
        started = time.perf_counter()
        try:
            return work(*args)
        finally:
            took = time.perf_counter() - started
            with self._lock:  # a moving average: the host's load changes
                self._hash_s += _HASH_S_WEIGHT * (took - self._hash_s)

    def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)
