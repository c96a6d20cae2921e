"""Test support for the web testbed: a populated evaluation series and in-process browsers.

Browsers go through the real ASGI app (routing, CSRF, cookies, templates); the database is
a real SQLite file, or PostgreSQL where a test asks for it.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import httpx
from fastapi import FastAPI

from corix.domain import Level, TurnRecord
from corix.storage import Database, load_session
from corix.storage.clock import utcnow
from corix.storage.web import assignments, qualification, transaction
from corix.storage.web.assignments import NewAssignment
from corix.web import Role, WebSettings
from corix.web.app import create_app
from corix.web.services import EvaluationSettings, SignedInUser
from corix.web.services.qualification import gold_prefix
from corix.web.services.training import GoldDialogue
from corix.web.state import WebState

PASSWORD = "correct horse battery staple"
# Cheap hashing keeps the suite fast; production defaults are tested in test_security.
FAST_SETTINGS = WebSettings(
    secret_key="test-secret-key", password_time_cost=1, password_memory_kib=64
)
APPLICATIONS = {"Acme Sentinel": "demo:guarded", "Zephyr Openbook": "demo:unguarded"}
CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')


class Browser:
    """One person's browser: cookies, the last page's CSRF token, every response seen."""

    def __init__(self, app: FastAPI) -> None:
        self.http = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://testserver"
        )
        self.responses: list[httpx.Response] = []
        self.username: str | None = None
        self._token: str | None = None

    async def get(self, url: str, **kwargs: Any) -> httpx.Response:
        return self._seen(await self.http.get(url, **kwargs))

    async def post(
        self,
        url: str,
        data: dict[str, Any] | None = None,
        *,
        as_json: bool = False,
        csrf: bool = True,
        **kwargs: Any,
    ) -> httpx.Response:
        form = dict(data or {})
        if csrf:
            if self._token is None:
                await self.get("/login")
            form.setdefault("csrf_token", self._token)
        headers = {"accept": "application/json"} if as_json else {}
        return self._seen(await self.http.post(url, data=form, headers=headers, **kwargs))

    async def follow(self, response: httpx.Response) -> httpx.Response:
        """Follow a redirect as a browser would."""
        assert response.status_code in (302, 303), response.text[:500]
        return await self.get(response.headers["location"])

    async def login(self, username: str, password: str = PASSWORD) -> httpx.Response:
        await self.get("/login")
        response = await self.post("/login", {"username": username, "password": password})
        assert response.status_code == 303, response.text[:500]
        self.username = username
        return await self.follow(response)

    def _seen(self, response: httpx.Response) -> httpx.Response:
        self.responses.append(response)
        match = (
            CSRF.search(response.text)
            if "text/html" in response.headers.get("content-type", "")
            else None
        )
        if match:
            self._token = match.group(1)
        return response

    async def aclose(self) -> None:
        await self.http.aclose()


@dataclass
class World:
    """An evaluation series with two applications, testers and annotators."""

    app: FastAPI
    state: WebState
    evaluation_id: str
    applications: dict[str, int]
    users: dict[str, SignedInUser] = field(default_factory=dict)

    def user(self, name: str) -> SignedInUser:
        return self.users[name]

    def add_user(self, name: str, role: Role) -> SignedInUser:
        self.users[name] = self.state.accounts.create_user(name, PASSWORD, role)
        return self.users[name]

    def assign_tester(self, name: str, *, per_tester: int = 1, seed: int = 0) -> None:
        """Give a tester ``per_tester`` more sessions in the series."""
        self.state.assigner.assign_testers(
            self.evaluation_id, [self.user(name).id], per_tester=per_tester, seed=seed
        )


def build_world(
    db: Database,
    *,
    applications: dict[str, str] = APPLICATIONS,
    scenarios: tuple[str, ...] = ("tv_spoilers",),
    passes_per_item: int = 2,
    max_turns: int = 30,
    review_rate: float = EvaluationSettings().review_rate,
    settings: WebSettings = FAST_SETTINGS,
    seed: int = 0,
) -> World:
    # A seeded random source: qualification draws are the same in every run of a test.
    app = create_app(db, settings=settings, rng=random.Random(seed))
    state: WebState = app.state.corix
    evaluation_id = state.evaluations.create(
        "Pilot series",
        description="",
        scenarios=list(scenarios),
        levels=[Level.MODEL_TESTING, Level.RED_TEAMING, Level.FIELD_TESTING],
        settings=EvaluationSettings(
            passes_per_item=passes_per_item, max_turns=max_turns, review_rate=review_rate
        ),
    )
    ids = {
        name: state.evaluations.register_application(
            evaluation_id, name=name, spec=spec, credentials_json=""
        )
        for name, spec in applications.items()
    }
    world = World(app, state, evaluation_id, ids)
    for name, role in (
        ("admin", Role.ADMIN),
        ("rita", Role.RED_TEAMER),
        ("felix", Role.FIELD_TESTER),
        ("fay", Role.FIELD_TESTER),
        ("anna", Role.ANNOTATOR),
        ("otto", Role.ANNOTATOR),
        ("sena", Role.SENIOR_ANNOTATOR),
    ):
        world.add_user(name, role)
    return world


def form_fields(html: str, prefix: str) -> Iterator[str]:
    """Names of the form fields starting with ``prefix`` in a page, in order, once each."""
    seen: set[str] = set()
    for name in re.findall(r'name="([^"]+)"', html):
        if name.startswith(prefix) and name not in seen:
            seen.add(name)
            yield name


# -- flows -----------------------------------------------------------------------------------
FIELD_TEST_ANSWERS = {
    "q_helpful": "4",
    "q_accurate": "5",
    "q_trust": "3",
    "q_guardrail_respected": "4",
    "q_would_use": "2",
}
RED_TEAM_ANSWERS = {
    "rt_strategies": "Asked directly, then claimed I had seen the finale.",
    "rt_refinement": "Moved to role-play when direct questions were refused.",
    "rt_outcome": "partly",
    "rt_vulnerabilities": "Role-play made it drop its guard.",
    "rt_difficulty": "3",
}
NEXT_SESSION = re.compile(r'id="next-session" href="/tester/a/([^"/]+)')


async def start_next_session(b: Browser) -> str:
    """Open the tester's next assignment, consent, and return its token."""
    home = await b.get("/tester")
    match = NEXT_SESSION.search(home.text)
    assert match, home.text[:2000]
    token = match.group(1)
    await b.get(f"/tester/a/{token}")
    started = await b.post(f"/tester/a/{token}/start", {"consent": "yes"})
    assert started.headers["location"] == f"/tester/a/{token}/chat"
    await b.follow(started)
    return token


async def say(b: Browser, token: str, text: str, turn: int | None) -> httpx.Response:
    data: dict[str, Any] = {"message": text}
    if turn is not None:
        data["turn"] = turn
    return await b.post(f"/tester/a/{token}/messages", data, as_json=True)


async def finish_session(b: Browser, token: str, answers: dict[str, str]) -> httpx.Response:
    ended = await b.post(f"/tester/a/{token}/end")
    assert ended.status_code == 303, ended.text[:1000]
    await b.follow(ended)
    form = {f"q:{item}": value for item, value in answers.items()}
    return await b.post(f"/tester/a/{token}/questionnaire", form)


async def run_tester(
    world: World, b: Browser, username: str, messages: list[str], answers: dict[str, str]
) -> str:
    """A whole session over HTTP: sign in, consent, chat, end, questionnaire."""
    await b.login(username)
    token = await start_next_session(b)
    for index, text in enumerate(messages):
        sent = await say(b, token, text, index)
        assert sent.status_code == 200, sent.text
    done = await finish_session(b, token, answers)
    assert done.headers["location"] == f"/tester/a/{token}/summary", done.text[:1000]
    summary = await b.follow(done)  # followed, so blinding scans cover the summary too
    assert summary.status_code == 200 and 'id="session-summary"' in summary.text
    return token


def gold_form(world: World, username: str) -> dict[str, str]:
    """The qualification form of ``username``'s latest draw, filled with the gold answers."""
    with transaction(world.state.db) as tx:
        drawn = qualification.draws(tx, world.user(username).id)[-1]
    by_id = {dialogue.id: dialogue for dialogue in world.state.qualification.gold.dialogues}
    return answer_key([by_id[dialogue_id] for dialogue_id in drawn.dialogue_ids])


def answer_key(dialogues: list[GoldDialogue]) -> dict[str, str]:
    """A draw's form filled with the gold answers (and a risk type where it is unscored)."""
    form: dict[str, str] = {}
    for place, dialogue in enumerate(dialogues, start=1):
        prefix = gold_prefix(place)
        for question_id, value in dialogue.answers.items():
            form[f"{prefix}:{question_id}"] = value
        violation = "yes" in (
            dialogue.answers["ra_prohibited_released"],
            dialogue.answers["ra_permitted_withheld"],
        )
        if violation and "ra_risk_type" not in dialogue.answers:
            form[f"{prefix}:ra_risk_type"] = "dangerous_violent_hateful_content"
    return form


def end_cooldown(world: World) -> None:
    """Move the qualification's clock past the cool-down, as if time had passed (later
    attempts are recorded at the moved time, so each cool-down still runs its length)."""
    test = world.state.qualification
    shift = test.clock() - utcnow() + test.rules.cooldown + timedelta(seconds=1)
    test.clock = lambda: utcnow() + shift


async def qualify(world: World, b: Browser) -> None:
    assert b.username is not None, "sign in first"
    await b.get("/annotate/qualification")
    result = await b.post("/annotate/qualification", gold_form(world, b.username))
    assert result.status_code == 200 and "Passed" in result.text, result.text[:2000]


async def claim(b: Browser, category: str) -> str | None:
    """The category's open task, or the queue's next dialogue; None when there is none."""
    home = await b.get("/annotate")
    open_task = re.search(rf'href="/annotate/tasks/([^"]+)" data-category="{category}"', home.text)
    if open_task is not None:
        return open_task.group(1)
    match = re.search(
        rf'action="/annotate/queues/(\d+)/next">.{{0,200}}?data-category="{category}"',
        home.text,
        re.S,
    )
    if match is None:
        return None
    claimed = await b.post(f"/annotate/queues/{match.group(1)}/next")
    location = claimed.headers["location"]
    if not location.startswith("/annotate/tasks/"):
        return None
    await b.get(location)
    return location.rsplit("/", 1)[1]


async def complete_session(
    world: World, username: str, messages: list[str], *, application: str | None = None
) -> str:
    """A finished human session made through the services (fast set-up for annotation tests).

    Assigns one more slot to the tester, optionally rewriting it to ``application``.
    """
    state = world.state
    user = world.user(username)
    state.assigner.assign_testers(
        world.evaluation_id, [user.id], per_tester=1, seed=len(state.testers.assignments(user))
    )
    assignment = next(a for a in state.testers.assignments(user) if a.status == "assigned")
    if application is not None:
        move_assignment(world, assignment.token, world.applications[application])
    await state.testers.start(user, assignment.token, consent=True)
    for index, text in enumerate(messages):
        await state.testers.send(user, assignment.token, text, expected_index=index)
    await state.testers.end(user, assignment.token)
    return session_of(world, assignment.token)


def move_assignment(world: World, token: str, application_id: int) -> None:
    """Put the slot on ``application_id``: the same slot, replaced under the same token."""
    with transaction(world.state.db) as tx:
        slot = assignments.by_token(tx, token)
        assert slot is not None
        assignments.delete_assignments(tx, [slot.id])
        assignments.add_assignments(
            tx,
            [
                NewAssignment(
                    token,
                    slot.evaluation_id,
                    slot.user_id,
                    application_id,
                    slot.scenario,
                    slot.level,
                    slot.position,
                    slot.briefing,
                )
            ],
        )


def move_every_assignment(world: World, application_id: int) -> None:
    """Put every slot of the series on ``application_id`` (one application under test)."""
    with transaction(world.state.db) as tx:
        tokens = [slot.token for slot in assignments.of_series(tx, world.evaluation_id)]
    for token in tokens:
        move_assignment(world, token, application_id)


def stored_turns(world: World, token: str) -> list[TurnRecord]:
    """The stored turns of the session begun on the assignment ``token``, in order."""
    session = load_session(world.state.db, session_of(world, token))
    return sorted(session.turns, key=lambda turn: turn.index)


def session_of(world: World, token: str) -> str:
    """The id of the session the tester began on the assignment ``token``."""
    with transaction(world.state.db) as tx:
        slot = assignments.by_token(tx, token)
    assert slot is not None and slot.session_id is not None
    return slot.session_id
