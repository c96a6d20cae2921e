"""Passwords, tokens, CSRF, login throttling, sessions and security headers."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from argon2 import PasswordHasher
from web_support import PASSWORD, Browser, World

from corix.storage import Database
from corix.storage.web import accounts as account_store
from corix.storage.web.accounts import InvitationState
from corix.web.security import (
    CsrfTokens,
    HashingBusy,
    HashingPool,
    Passwords,
    new_token,
    token_digest,
)
from corix.web.services.clock import utcnow
from corix.web.services.sign_in_throttle import SignInDecision, SignInThrottle
from corix.web.serving import proxy_settings
from corix.web.settings import WebSettings

MakeBrowser = Callable[[], Browser]


def test_passwords_are_argon2id_and_old_parameters_are_upgraded() -> None:
    passwords = Passwords(time_cost=1, memory_kib=64)
    stored = passwords.hash("a long passphrase")
    assert stored.startswith("$argon2id$")
    assert passwords.check(stored, "a long passphrase").ok
    assert not passwords.check(stored, "a long passphrasE").ok
    assert not passwords.check("not a hash", "a long passphrase").ok
    weaker = PasswordHasher(time_cost=1, memory_cost=32).hash("a long passphrase")
    upgraded = passwords.check(weaker, "a long passphrase")
    assert upgraded.ok and upgraded.new_hash is not None and "m=64" in upgraded.new_hash


def test_production_password_settings_follow_the_argon2_recommendation() -> None:
    settings = WebSettings()
    # OWASP's first argon2id setting: 19 MiB, 2 passes, 1 lane.
    assert (settings.password_memory_kib, settings.password_time_cost) == (19 * 1024, 2)
    assert settings.password_lanes == 1


def test_tokens_are_random_and_stored_as_digests() -> None:
    tokens = {new_token() for _ in range(100)}
    assert len(tokens) == 100 and all(len(t) >= 43 for t in tokens)
    token = next(iter(tokens))
    assert token_digest(token) == token_digest(token) and token_digest(token) != token
    assert len(token_digest(token)) == 64


def test_csrf_tokens_are_bound_to_their_seed_and_key() -> None:
    tokens = CsrfTokens("key-one")
    token = tokens.token_for("seed-a")
    assert tokens.valid("seed-a", token)
    assert not tokens.valid("seed-b", token)
    assert not CsrfTokens("key-two").valid("seed-a", token)
    assert not tokens.valid(None, token) and not tokens.valid("seed-a", None)


def _throttle(db: Database, now: list[datetime], **overrides: Any) -> SignInThrottle:
    rules: dict[str, Any] = {
        "max_failures": 3,
        "window": timedelta(minutes=10),
        "max_delay": timedelta(seconds=60),
        "max_per_address": 50,
        "address_delay": timedelta(seconds=2),
    }
    return SignInThrottle(db, **(rules | overrides), clock=lambda: now[0])


def test_an_account_waits_longer_after_each_failure_wherever_the_guesses_come_from(
    any_db: Database,
) -> None:
    now = [datetime(2026, 1, 1, tzinfo=UTC)]
    throttle = _throttle(any_db, now)
    for address in ("10.0.0.1", "10.0.0.2", "10.0.0.3"):
        assert throttle.attempt("anna", address).wait_s == 0
    # The fourth attempt, from anywhere, waits 1 s after the third; the fifth 2 s, …
    assert throttle.attempt("anna", "10.0.0.4").wait_s == 1.0
    now[0] += timedelta(seconds=1)
    assert throttle.attempt("anna", "10.0.0.5").wait_s == 0
    assert throttle.attempt("anna", "10.0.0.1").wait_s == 2.0
    now[0] += timedelta(seconds=2)
    assert throttle.attempt("anna", "10.0.0.1").wait_s == 0
    assert throttle.attempt("anna", "10.0.0.1").wait_s == 4.0
    # Another account at the same address is not affected.
    assert throttle.attempt("otto", "10.0.0.1").wait_s == 0
    # The delay grows to its cap, no further; the window forgets old failures.
    now[0] += timedelta(seconds=4)
    for _ in range(6):
        throttle.attempt("anna", "10.0.0.1")
        now[0] += timedelta(seconds=61)
    assert throttle.attempt("anna", "10.0.0.1").wait_s == 0
    assert throttle.attempt("anna", "10.0.0.1").wait_s == 60.0
    now[0] += timedelta(minutes=11)
    assert throttle.attempt("anna", "10.0.0.1").wait_s == 0
    # A correct password forgets the account's failures.
    throttle.attempt("anna", "10.0.0.1")
    throttle.attempt("anna", "10.0.0.1")
    throttle.succeeded("anna", "10.0.0.1")
    assert [throttle.attempt("anna", "10.0.0.1").wait_s for _ in range(3)] == [0, 0, 0]


def test_a_busy_address_is_slowed_never_refused(any_db: Database) -> None:
    now = [datetime(2026, 1, 1, tzinfo=UTC)]
    throttle = _throttle(any_db, now, max_per_address=10)
    for n in range(10):
        assert throttle.attempt(f"user{n}", "10.0.0.9") == SignInDecision(wait_s=0)
    # The 11th attempt from the address, for an account with no failures, is let through
    # after a pause; another address is not slowed.
    assert throttle.attempt("someone-else", "10.0.0.9") == SignInDecision(0, slow_down_s=2.0)
    assert throttle.attempt("someone-else", "10.0.0.8") == SignInDecision(wait_s=0)
    # Correct passwords from the address do not count towards its limit.
    for n in range(10):
        throttle.succeeded(f"user{n}", "10.0.0.9")
    assert throttle.attempt("user0", "10.0.0.9") == SignInDecision(wait_s=0)


def test_concurrent_guesses_get_no_more_than_the_allowed_tries(any_db: Database) -> None:
    throttle = _throttle(any_db, [utcnow()], max_failures=5)
    with ThreadPoolExecutor(max_workers=8) as pool:
        decisions = list(pool.map(lambda _: throttle.attempt("anna", "10.0.0.1"), range(20)))
    assert sum(decision.wait_s == 0 for decision in decisions) == 5


def test_two_processes_share_one_count(any_db: Database) -> None:
    """Two servers on one database (here: two throttles) count the same failures."""
    now = [datetime(2026, 1, 1, tzinfo=UTC)]
    first, second = _throttle(any_db, now), _throttle(any_db, now)
    for throttle in (first, second, first):
        assert throttle.attempt("anna", "10.0.0.1").wait_s == 0
    assert second.attempt("anna", "10.0.0.1").wait_s == 1.0


async def test_hashing_runs_on_its_own_threads_and_refuses_past_its_queue() -> None:
    pool = HashingPool(threads=1, max_waiting=2)
    gate = threading.Event()
    names: list[str] = []

    def slow_hash() -> str:
        names.append(threading.current_thread().name)
        gate.wait(5)
        return "hashed"

    try:
        waiting = [asyncio.ensure_future(pool.run(slow_hash)) for _ in range(3)]
        await asyncio.sleep(0.05)
        assert pool.pending == 3
        with pytest.raises(HashingBusy):
            await pool.run(slow_hash)
        # The event loop (and every page) stays free while the hashes wait.
        started = time.perf_counter()
        await asyncio.sleep(0.01)
        assert time.perf_counter() - started < 0.5
        gate.set()
        assert await asyncio.gather(*waiting) == ["hashed"] * 3
        assert pool.pending == 0 and all(name.startswith("corix-hash") for name in names)
    finally:
        gate.set()
        pool.close()


async def test_a_check_that_would_wait_too_long_is_told_when_to_retry() -> None:
    # On a slow host a queue of 100 made sign-ins wait 25 s before anyone was told to
    # retry; the wait is now estimated from how long hashes take here.
    pool = HashingPool(threads=1, max_waiting=100, max_wait_s=0.5)

    def slow_hash() -> float:
        time.sleep(0.1)  # releases the GIL, as argon2 does
        return time.perf_counter()

    try:
        for _ in range(10):  # the pool learns what a hash takes on this host
            await pool.run(slow_hash)
        asked = time.perf_counter()
        burst = [asyncio.ensure_future(pool.run(slow_hash)) for _ in range(20)]
        results = await asyncio.gather(*burst, return_exceptions=True)
    finally:
        pool.close()
    finished = [r for r in results if isinstance(r, float)]
    refused = [r for r in results if isinstance(r, HashingBusy)]
    assert len(finished) + len(refused) == 20
    assert 3 <= len(finished) <= 8  # about 0.5 s of waiting at 0.1 s a hash, plus one running
    assert refused and all(busy.retry_s >= 1 for busy in refused)
    # Each accepted check started within the promised wait (plus its own hash and slack).
    assert max(finished) - asked < 0.5 + 0.1 + 1.0


async def test_a_correct_password_signs_in_from_a_busy_address(
    world: World, browser: MakeBrowser
) -> None:
    """Password spraying from an address slows it down but locks nobody out."""
    b = browser()
    await b.get("/login")
    limit = world.state.settings.login_max_per_address
    throttle = world.state.throttle
    for n in range(limit):
        throttle.attempt(f"nobody{n}", "127.0.0.1")
    ok = await b.post("/login", {"username": "anna", "password": PASSWORD})
    assert ok.status_code == 303


def test_forwarded_headers_are_believed_only_from_named_proxies() -> None:
    assert proxy_settings(None) == (False, None)
    assert proxy_settings(["10.0.0.5", "10.0.0.6"]) == (True, "10.0.0.5,10.0.0.6")


async def test_sign_in_is_rate_limited(world: World, browser: MakeBrowser) -> None:
    b = browser()
    await b.get("/login")
    for _ in range(world.state.settings.login_max_failures):
        wrong = await b.post("/login", {"username": "anna", "password": "wrong password!"})
        assert wrong.status_code == 401 and "Wrong username or password" in wrong.text
    blocked = await b.post("/login", {"username": "anna", "password": PASSWORD})
    assert blocked.status_code == 429
    assert "Too many failed attempts" in blocked.text
    assert "corix_session" not in blocked.cookies


async def test_session_cookie_is_http_only_and_sign_out_ends_the_session(
    world: World, browser: MakeBrowser
) -> None:
    b = browser()
    await b.get("/login")
    response = await b.post("/login", {"username": "anna", "password": PASSWORD})
    cookie = response.headers["set-cookie"]
    assert "corix_session=" in cookie and "HttpOnly" in cookie and "SameSite=lax" in cookie
    assert "Secure" not in cookie  # plain http in tests; https requests get Secure
    await b.follow(response)
    signed_in = token_digest(b.http.cookies["corix_session"])
    found = account_store.user_for_login(world.state.db, signed_in)
    assert found is not None and found.id == world.user("anna").id
    out = await b.post("/logout")
    assert out.headers["location"] == "/login?notice=signed_out"
    assert account_store.user_for_login(world.state.db, signed_in) is None
    assert (await b.get("/annotate")).headers["location"] == "/login?next=/annotate"


async def test_cookies_are_secure_over_https(world: World) -> None:
    b = Browser(world.app)
    b.http.base_url = "https://testserver"
    try:
        page = await b.get("/login")
        assert "Secure" in page.headers["set-cookie"]
    finally:
        await b.aclose()


async def test_expired_sessions_and_deactivated_users_are_signed_out(
    world: World, browser: MakeBrowser
) -> None:
    b = browser()
    accounts = world.state.accounts
    lasts = timedelta(hours=world.state.settings.session_hours)
    accounts.clock = lambda: utcnow() - lasts - timedelta(seconds=1)  # signed in that long ago
    await b.login("anna")
    accounts.clock = utcnow
    assert (await b.get("/annotate")).status_code == 303
    await b.login("anna")
    world.state.accounts.set_active(world.user("anna").id, False)
    assert (await b.get("/annotate")).status_code == 303
    refused = await b.post("/login", {"username": "anna", "password": PASSWORD})
    assert refused.status_code == 401


async def test_pages_carry_security_headers(world: World, browser: MakeBrowser) -> None:
    page = await browser().get("/login")
    policy = page.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "unsafe-inline" not in policy
    assert page.headers["x-frame-options"] == "DENY"
    assert page.headers["referrer-policy"] == "no-referrer"
    assert page.headers["cache-control"] == "no-store"


async def test_responses_state_the_servers_time(world: World, browser: MakeBrowser) -> None:
    started = time.perf_counter()
    page = await browser().get("/login")
    round_trip_ms = (time.perf_counter() - started) * 1000
    name, _, duration = page.headers["server-timing"].partition(";dur=")
    assert name == "app"
    assert 0 < float(duration) <= round_trip_ms


def test_secrets_are_stored_as_digests(world: World) -> None:
    token = world.state.accounts.invite(world.user("admin").role, created_by=None)
    session = world.state.accounts.open_session(world.user("admin").id)
    db = world.state.db
    # Stored under their digests: the secrets themselves find nothing.
    assert account_store.invitation(db, token) is InvitationState.UNKNOWN
    assert account_store.user_for_login(db, session) is None
    assert not isinstance(account_store.invitation(db, token_digest(token)), InvitationState)
    assert account_store.user_for_login(db, token_digest(session)) is not None
    hashes = set()
    for user in account_store.users(db):
        found = account_store.user_for_sign_in(db, user.username)
        assert found is not None
        hashes.add(found[1])
    assert PASSWORD not in hashes and all(h.startswith("$argon2id$") for h in hashes)
