"""Slowing password guessing without locking anyone out of their own account.

Two counts, both in the database so every server process sees the same ones:

- **per account**, wherever the attempts come from: after ``max_failures`` failures in the
  window, each further attempt must wait twice as long after the last as the one before
  (1 s, 2 s, 4 s … up to ``max_delay``), and is refused with the wait until then. A correct
  password forgets the account's failures.
- **per address**, over all accounts: past ``max_per_address`` attempts in the window
  (password spraying, or a classroom behind one address), every attempt from it is
  *slowed* by ``address_delay`` before it is checked, never refused: a correct password of
  another account still signs in.

An attempt is counted when it starts, under the count's row lock, so concurrent guesses
cannot all slip through before the first failure is recorded.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from corix.storage import Database
from corix.storage.web import sign_in as store
from corix.storage.web.sign_in import Failures
from corix.web.services.clock import utcnow


@dataclass(frozen=True)
class SignInDecision:
    wait_s: float
    """Above 0: the account must wait this long; the attempt was refused, not counted."""
    slow_down_s: float = 0.0
    """Pause before the password is checked (the address is over its limit)."""


class SignInThrottle:
    def __init__(
        self,
        db: Database,
        *,
        max_failures: int,
        window: timedelta,
        max_delay: timedelta,
        max_per_address: int,
        address_delay: timedelta,
        first_delay_s: float = 1.0,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        self._db = db
        self._max = max_failures
        self._window = window
        self._max_delay_s = max_delay.total_seconds()
        self._max_per_address = max_per_address
        self._address_delay_s = address_delay.total_seconds()
        self._first_delay_s = first_delay_s
        self._clock = clock

    def attempt(self, account: str, address: str) -> SignInDecision:
        now = self._clock()

        def account_wait(failures: Failures) -> float:
            if failures.count < self._max or failures.last_at is None:
                return 0.0
            delay = self._first_delay_s * 2.0 ** min(failures.count - self._max, 32)
            return min(delay, self._max_delay_s) - (now - failures.last_at).total_seconds()

        wait = store.count_attempt(
            self._db, _account(account), now=now, window=self._window, wait_for=account_wait
        )
        if wait > 0:
            return SignInDecision(wait_s=wait)
        crowded = False

        def address_count(failures: Failures) -> float:
            nonlocal crowded
            crowded = failures.count >= self._max_per_address
            return 0.0  # an address is never refused, only slowed

        store.count_attempt(
            self._db, _address(address), now=now, window=self._window, wait_for=address_count
        )
        return SignInDecision(wait_s=0.0, slow_down_s=self._address_delay_s if crowded else 0.0)

    def succeeded(self, account: str, address: str) -> None:
        """The password was right: forget the account's failures; the address's attempt
        was no failure either."""
        store.settle(self._db, forget=_account(account), discount=_address(address))


def _account(name: str) -> str:
    return f"account:{name}"


def _address(address: str) -> str:
    return f"address:{address}"
