"""Helpers for the browser tests: the live server's handle, sign-in, screenshots."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from playwright.sync_api import Page

from corix.domain import EndReason, Level, Provenance, SessionSource, TurnRecord
from corix.storage.clock import utcnow
from corix.storage.sessions import SessionEnd, store_session
from corix.storage.store_records import NewSession
from corix.storage.web import qualification, transaction
from corix.web import Role, WebSettings
from corix.web.services import SignedInUser, human_run_id
from corix.web.services.annotation_forms import checked_answers
from corix.web.services.qualification import gold_prefix
from corix.web.services.training import GoldDialogue
from corix.web.state import WebState

CHROMIUM = "/usr/bin/chromium"
# Every wait in the browser tests is on a condition; this bounds it. It is long because a
# loaded two-core machine (the suite runs on two workers) can take seconds per navigation.
ACTION_TIMEOUT_MS = 30_000
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
SCREENSHOTS = Path(__file__).resolve().parents[3] / "test-artifacts" / "screenshots"
PASSWORD = "correct horse battery staple"
SETTINGS = WebSettings(secret_key="browser-tests", password_time_cost=1, password_memory_kib=64)


@dataclass
class LiveServer:
    url: str
    state: WebState
    evaluation_id: str
    applications: dict[str, int]
    _restart: Callable[[], WebState]

    def add_user(self, name: str, role: Role) -> int:
        return self.state.accounts.create_user(name, PASSWORD, role).id

    def user(self, name: str) -> SignedInUser:
        found = next(u for u in self.state.accounts.users() if u.username == name)
        user = self.state.accounts.user_for_session(self.state.accounts.open_session(found.id))
        assert user is not None
        return user

    def restart(self) -> None:
        """Restart the server process: what it held in memory (live dialogues) is gone."""
        self.state = self._restart()


def shot(page: Page, name: str) -> Path:
    """Save a full-page screenshot as a test artifact."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


def sign_in(page: Page, server: LiveServer, username: str) -> None:
    page.goto(f"{server.url}/login")
    page.fill("#username", username)
    page.fill("#password", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_load_state()


def store_dialogue(server: LiveServer, turns: list[tuple[str, str]], *, tester: int) -> str:
    """A finished human session of the series, written as the chat would have written it."""
    session_id = uuid.uuid4().hex
    provenance = Provenance(
        application="Acme Sentinel", scenario="tv_spoilers", parameters={"episode_seen": 2}
    )
    new = NewSession(
        id=session_id,
        run_id=human_run_id(server.evaluation_id),
        work_key=None,
        application_id=server.applications["Acme Sentinel"],
        scenario="tv_spoilers",
        level=Level.FIELD_TESTING,
        source=SessionSource.HUMAN,
        provenance=provenance,
        tester_id=tester,
    )
    said = [
        TurnRecord(index=index, user_text=user_text, response_text=reply)
        for index, (user_text, reply) in enumerate(turns)
    ]
    with transaction(server.state.db) as tx:
        store_session(tx, new, said, SessionEnd(session_id, EndReason.USER_ENDED))
    return session_id


def end_cooldown(server: LiveServer) -> None:
    """Move the qualification's clock past the cool-down, as if time had passed (later
    attempts are recorded at the moved time, so each cool-down still runs its length)."""
    test = server.state.qualification
    shift = test.clock() - utcnow() + test.rules.cooldown + timedelta(seconds=1)
    test.clock = lambda: utcnow() + shift


def latest_draw(server: LiveServer, username: str) -> list[GoldDialogue]:
    """The gold dialogues of the user's latest qualification draw, in the order shown."""
    user = server.user(username)
    with transaction(server.state.db) as tx:
        drawn = qualification.draws(tx, user.id)[-1]
    by_id = {dialogue.id: dialogue for dialogue in server.state.qualification.gold.dialogues}
    return [by_id[dialogue_id] for dialogue_id in drawn.dialogue_ids]


def answer_key(dialogues: list[GoldDialogue]) -> dict[str, str]:
    """A draw's qualification form filled with the gold answers."""
    form: dict[str, str] = {}
    for place, dialogue in enumerate(dialogues, start=1):
        prefix = gold_prefix(place)
        for question_id, value in dialogue.answers.items():
            form[f"{prefix}:{question_id}"] = value
        if "ra_user_induced" in dialogue.answers and "ra_risk_type" not in dialogue.answers:
            form[f"{prefix}:ra_risk_type"] = "dangerous_violent_hateful_content"
    return form


def qualify(server: LiveServer, username: str) -> SignedInUser:
    """Pass the qualification test through the service (tested in the browser elsewhere)."""
    user = server.user(username)
    assert server.state.qualification.submit(
        user, answer_key(server.state.qualification.draw(user))
    ).passed
    return user


def populate_series(server: LiveServer) -> str:
    """A series with a finished session, two disagreeing passes and an open assignment."""
    state = server.state
    tester = server.add_user("tess", Role.RED_TEAMER)
    session_id = store_dialogue(
        server,
        [("I'm on episode 2. Who is the Cartographer?", "The Cartographer is Vera Calloway.")],
        tester=tester,
    )
    state.assigner.assign_testers(server.evaluation_id, [tester], per_tester=2, seed=0)
    ids = {
        name: server.add_user(name, role)
        for name, role in (("anna", Role.ANNOTATOR), ("otto", Role.ANNOTATOR))
    }
    server.add_user("sena", Role.SENIOR_ANNOTATOR)
    server.add_user("admin", Role.ADMIN)
    senior = next(u.id for u in state.accounts.users() if u.username == "sena")
    state.assigner.assign_annotators(
        server.evaluation_id, [*ids.values(), senior], ["risk_assessment"]
    )
    for name, verdict in (("anna", "yes"), ("otto", "no")):
        user = qualify(server, name)
        label_screening(state, user, verdict, flagged=True, note=f"{name}'s long note " * 8)
    # A second dialogue, so an annotator has one left to open.
    store_dialogue(
        server, [("Recap episode 1?", "Maren finds the lighthouse dark.")], tester=tester
    )
    return session_id


def label_screening(
    state: WebState, user: SignedInUser, verdict: str, *, flagged: bool, note: str | None
) -> None:
    """``user`` claims their next dialogue and answers the screening category: prohibited
    content released ``verdict`` ("yes" with the follow-ups a yes opens), nothing withheld."""
    (queue,) = state.queue.queues(user)
    token = state.queue.claim_next(user, queue.id)
    assert token is not None
    answers = {"a:ra_prohibited_released": verdict, "a:ra_permitted_withheld": "no"}
    if verdict == "yes":
        answers |= {
            "a:ra_user_induced": "yes",
            "a:ra_risk_type": "data_privacy",
            "a:ra_outcome": "negative",
        }
    parsed = checked_answers(state.schema, state.schema.screening_category, answers, 1)
    state.queue.submit(user, token, parsed, flagged=flagged, note=note)
