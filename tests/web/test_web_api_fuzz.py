"""Schemathesis over every route of the web app, signed in as an admin: no server errors.

Routes take forms and path ids; schemathesis generates values for every parameter from
the app's OpenAPI description (not served in production, built here from the app),
hostile strings included (NUL, lone surrogates, huge numbers). A response may refuse
(4xx) but never fail (5xx), on SQLite and on PostgreSQL, which refuses NUL anywhere.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pytest
import schemathesis
from fastapi import FastAPI
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, settings
from web_support import PASSWORD, build_world

from corix.storage import Database
from corix.web.app import create_app


@dataclass(frozen=True)
class SignedIn:
    app: FastAPI
    cookies: dict[str, str]


def _admin_cookies(app: FastAPI) -> dict[str, str]:
    with TestClient(app) as client:
        page = client.get("/login")
        token = page.text.split('name="csrf_token" value="', 1)[1].split('"', 1)[0]
        client.post(
            "/login",
            data={"username": "admin", "password": PASSWORD, "csrf_token": token},
            follow_redirects=False,
        )
        return dict(client.cookies)


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def signed_in(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SignedIn]:
    """One world per backend for every route's examples, and an admin's cookies."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path_factory.mktemp('fuzz') / 'web.db'}"
    else:
        make: Callable[[], str] = request.getfixturevalue("postgres_databases")
        url = make()
    db = Database(url)
    app = build_world(db).app
    cookies = _admin_cookies(app)
    assert "corix_session" in cookies, "the fuzzing must run signed in"
    yield SignedIn(app, cookies)
    db.dispose()


# The routes are the same whatever the database: the schema is read off an app over an
# empty in-memory database; every example is sent to its backend's app (``app=``).
_ROUTES = create_app(Database("sqlite://"))
schema = schemathesis.openapi.from_dict(_ROUTES.openapi())
schema.app = _ROUTES


@pytest.mark.slow  # 112 generated cases, about 40 s: a fuzz study, run with -m slow
@schema.parametrize()
@settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck))
def test_no_route_answers_with_a_server_error(case: schemathesis.Case, signed_in: SignedIn) -> None:
    response = case.call(app=signed_in.app, cookies=signed_in.cookies)
    assert response.status_code < 500, (case.method, case.formatted_path, response.text[:300])
    if (case.method, case.formatted_path) == ("GET", "/admin"):
        assert response.status_code == 200  # the examples reach the signed-in backend's app
