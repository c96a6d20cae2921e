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
    """Slows password guessing without letting one person's typos lock others out.

    Failures are counted per account *at* an address: after ``max_failures`` of them,
    each further attempt must wait twice as long as the last (1 s, 2 s, 4 s … up to the
    window), so guessing slows exponentially while a colleague at the same address signs
    in undisturbed. An address is refused outright only after ``max_per_address`` failures
    over all accounts in the window (password spraying). An attempt is counted when it
    *starts*, under a lock, so concurrent guesses cannot all slip through before the first
    failure is recorded; a successful sign-in forgets the account's failures at that
    address. State is per process: several workers each keep their own count.
    """

    def __init__(
        self,
        *,
        max_failures: int,
        window_s: float,
        max_per_address: int = 50,
        first_delay_s: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._max = max_failures
        self._window = window_s
        self._max_per_address = max_per_address
        self._first_delay = first_delay_s
        self._clock = clock
        self._attempts: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def attempt(self, account: str, address: str) -> float:
        """Atomically: 0 with the attempt counted, or the seconds to wait (nothing counted)."""
        pair, spray = f"{address}|{account}", f"{address}|*"
        with self._lock:
            now = self._clock()
            tried = self._recent(pair, now)
            wait = 0.0
            if len(tried) >= self._max:
                delay = self._first_delay * 2.0 ** min(len(tried) - self._max, 32)
                wait = min(delay, self._window) - (now - tried[-1])
            everyone = self._recent(spray, now)
            if len(everyone) >= self._max_per_address:
                wait = max(wait, everyone[0] + self._window - now)
            if wait > 0:
                return wait
            self._attempts.setdefault(pair, deque()).append(now)
            self._attempts.setdefault(spray, deque()).append(now)
            return 0.0

    def succeeded(self, account: str, address: str) -> None:
        """The attempt was right: forget this account's failures at this address."""
        with self._lock:
            self._attempts.pop(f"{address}|{account}", None)
            spray = self._attempts.get(f"{address}|*")
            if spray:
                spray.pop()  # the successful attempt was no failure

    def _recent(self, key: str, now: float) -> deque[float]:
        recent = self._attempts.get(key, deque())
        while recent and recent[0] <= now - self._window:
            recent.popleft()
        if not recent:
            self._attempts.pop(key, None)
        return recent
