"""Security primitives: password hashing, opaque tokens, CSRF tokens and login throttling.

Pure helpers with no HTTP in them, so each can be tested on its own.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

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


class Passwords:
    """Argon2id password hashing."""

    def __init__(self, *, time_cost: int = 3, memory_kib: int = 64 * 1024) -> None:
        self._hasher = PasswordHasher(time_cost=time_cost, memory_cost=memory_kib)

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


class LoginThrottle:
    """Refuses sign-in attempts after too many recent failures for one key.

    Keys are the client address and the username, throttled separately, so one address
    cannot guess many passwords and many addresses cannot hammer one account. State is
    per process: a deployment behind several workers gets a limit per worker.
    """

    def __init__(
        self,
        *,
        max_failures: int,
        window_s: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._max = max_failures
        self._window = window_s
        self._clock = clock
        self._failures: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def retry_after(self, *keys: str) -> float:
        """Seconds until an attempt with ``keys`` is allowed again; 0 when it is allowed now."""
        now = self._clock()
        wait = 0.0
        with self._lock:
            for key in keys:
                recent = self._recent(key, now)
                if len(recent) >= self._max:
                    wait = max(wait, recent[0] + self._window - now)
        return wait

    def record_failure(self, *keys: str) -> None:
        now = self._clock()
        with self._lock:
            for key in keys:
                self._failures.setdefault(key, deque()).append(now)

    def clear(self, *keys: str) -> None:
        with self._lock:
            for key in keys:
                self._failures.pop(key, None)

    def _recent(self, key: str, now: float) -> deque[float]:
        recent = self._failures.get(key, deque())
        while recent and recent[0] <= now - self._window:
            recent.popleft()
        if not recent:
            self._failures.pop(key, None)
        return recent
