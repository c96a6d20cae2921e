"""Passwords, tokens, CSRF, login throttling, sessions and security headers."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

from argon2 import PasswordHasher
from sqlalchemy import select, update
from web_support import PASSWORD, Browser, World

from corix.storage.orm_web import InvitationRow, LoginSessionRow, UserRow
from corix.web.security import CsrfTokens, LoginThrottle, Passwords, new_token, token_digest
from corix.web.services.clock import utcnow
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
    assert settings.password_time_cost >= 2 and settings.password_memory_kib >= 19 * 1024


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


def test_login_throttle_slows_one_account_at_one_address_exponentially() -> None:
    now = [1000.0]
    throttle = LoginThrottle(max_failures=3, window_s=600, clock=lambda: now[0])
    for _ in range(3):
        assert throttle.attempt("anna", "10.0.0.1") == 0
    # The fourth attempt waits 1 s after the third, the fifth 2 s after the fourth, …
    assert throttle.attempt("anna", "10.0.0.1") == 1.0
    now[0] += 1.0
    assert throttle.attempt("anna", "10.0.0.1") == 0
    assert throttle.attempt("anna", "10.0.0.1") == 2.0
    now[0] += 2.0
    assert throttle.attempt("anna", "10.0.0.1") == 0
    assert throttle.attempt("anna", "10.0.0.1") == 4.0
    # One person's typos never lock out a colleague at the same address, nor the account
    # from elsewhere.
    assert throttle.attempt("otto", "10.0.0.1") == 0
    assert throttle.attempt("anna", "10.0.0.2") == 0
    # Success forgets the account's failures at that address.
    throttle.succeeded("anna", "10.0.0.1")
    assert throttle.attempt("anna", "10.0.0.1") == 0


def test_an_address_spraying_many_accounts_is_refused() -> None:
    now = [0.0]
    throttle = LoginThrottle(max_failures=3, window_s=60, max_per_address=10, clock=lambda: now[0])
    for n in range(10):
        assert throttle.attempt(f"user{n}", "10.0.0.9") == 0
    assert throttle.attempt("someone-else", "10.0.0.9") == 60
    assert throttle.attempt("someone-else", "10.0.0.8") == 0


def test_concurrent_guesses_get_no_more_than_the_allowed_tries() -> None:
    throttle = LoginThrottle(max_failures=5, window_s=900)
    with ThreadPoolExecutor(max_workers=30) as pool:
        allowed = list(pool.map(lambda _: throttle.attempt("anna", "10.0.0.1") == 0, range(30)))
    assert sum(allowed) == 5


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
    with world.state.db.session() as s:
        assert len(s.scalars(select(LoginSessionRow)).all()) == 1
    out = await b.post("/logout")
    assert out.headers["location"] == "/login?notice=signed_out"
    with world.state.db.session() as s:
        assert s.scalars(select(LoginSessionRow)).all() == []
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
    await b.login("anna")
    with world.state.db.session() as s:
        s.execute(update(LoginSessionRow).values(expires_at=utcnow() - timedelta(seconds=1)))
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


def test_secrets_are_stored_as_digests(world: World) -> None:
    token = world.state.accounts.invite(world.user("admin").role, created_by=None)
    session = world.state.accounts.open_session(world.user("admin").id)
    with world.state.db.session() as s:
        digests = set(s.scalars(select(InvitationRow.token_digest))) | set(
            s.scalars(select(LoginSessionRow.token_digest))
        )
        hashes = set(s.scalars(select(UserRow.password_hash)))
    assert token not in digests and session not in digests
    assert token_digest(token) in digests and token_digest(session) in digests
    assert PASSWORD not in hashes and all(h.startswith("$argon2id$") for h in hashes)
