"""Schemathesis over every route of the web app, signed in as an admin: no server errors.

Routes take forms and path ids; schemathesis generates values for every parameter from
the app's OpenAPI description (not served in production, built here from the app). A
response may refuse (4xx) but never fail (5xx).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import schemathesis
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, settings
from web_support import PASSWORD, build_world

from corix.storage import Database

_DB = Database(f"sqlite:///{Path(tempfile.mkdtemp(prefix='corix-fuzz-')) / 'web.db'}")
_WORLD = build_world(_DB)
_APP = _WORLD.app


def _admin_cookies() -> dict[str, str]:
    with TestClient(_APP) as client:
        page = client.get("/login")
        token = page.text.split('name="csrf_token" value="', 1)[1].split('"', 1)[0]
        client.post(
            "/login",
            data={"username": "admin", "password": PASSWORD, "csrf_token": token},
            follow_redirects=False,
        )
        return dict(client.cookies)


COOKIES = _admin_cookies()
assert "corix_session" in COOKIES, "the fuzzing must run signed in"
schema = schemathesis.openapi.from_dict(_APP.openapi())
schema.app = _APP


@schema.parametrize()
@settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck))
def test_no_route_answers_with_a_server_error(case: schemathesis.Case) -> None:
    response = case.call(cookies=COOKIES)
    assert response.status_code < 500, (case.method, case.formatted_path, response.text[:300])
