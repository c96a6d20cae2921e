"""A series run for real in the browser: the message limit, server restarts, automated runs
beside human sessions, the admin's measurement pages and least-privileged invitations.

Screenshots are saved under test-artifacts/screenshots/.
"""

from __future__ import annotations

import csv
import io
import re
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from browser_support import LiveServer, label_screening, qualify, shot, sign_in, store_dialogue
from playwright.sync_api import Page, Route, expect

from corix.domain import Level, TurnRecord
from corix.storage import (
    RunRecord,
    evaluation_runs,
    list_runs,
    load_passes,
    load_session,
    measured_dialogues,
)
from corix.storage.web import assignments
from corix.web import Role
from corix.web.services import EvaluationSettings

pytestmark = pytest.mark.browser
NewPage = Callable[[], Page]
ARIA_TEAM = Path(__file__).resolve().parents[2] / "apps" / "submissions" / "team_a"


def _turns(server: LiveServer, tester: int, evaluation_id: str) -> list[TurnRecord]:
    """The stored turns of the tester's session in the series, in order."""
    (slot,) = [
        slot
        for slot in assignments.of_user(server.state.db, tester)
        if slot.evaluation_id == evaluation_id
    ]
    assert slot.session_id is not None
    session = load_session(server.state.db, slot.session_id)
    return sorted(session.turns, key=lambda turn: turn.index)


def _send(page: Page, text: str, replies_before: int) -> None:
    page.fill("#message", text)
    page.click("#chat-form button[type=submit]")
    replies = page.locator("#transcript .bubble.assistant:not(.pending)")
    expect(replies).to_have_count(replies_before + 1)


def _open_next_session(page: Page) -> None:
    page.click("#next-session")
    page.check("input[name=consent]")
    page.click("text=Start the session")
    expect(page.locator("#chat-form")).to_be_visible()
    page.wait_for_load_state("load")  # chat.js is deferred: typing before it runs is not kept


def _series(server: LiveServer, name: str, spec: str, *, max_turns: int = 30) -> str:
    """A second series with one application, for one tester."""
    state = server.state
    evaluation_id = state.evaluations.create(
        name,
        description="",
        scenarios=["tv_spoilers"],
        levels=[Level.RED_TEAMING, Level.FIELD_TESTING],
        settings=EvaluationSettings(max_turns=max_turns),
    )
    state.evaluations.register_application(
        evaluation_id, name=f"{name} app", spec=spec, credentials_json=""
    )
    return evaluation_id


def test_the_message_limit_replaces_the_send_form_and_says_so_once(
    server: LiveServer, new_page: NewPage
) -> None:
    evaluation_id = _series(server, "Short talks", "demo:guarded", max_turns=2)
    tester = server.add_user("lena", Role.FIELD_TESTER)
    server.state.assigner.assign_testers(evaluation_id, [tester], per_tester=1, seed=0)
    page = new_page()
    sign_in(page, server, "lena")
    _open_next_session(page)
    stale = page.context.new_page()  # a second tab, still showing the form
    stale.goto(page.url)
    _send(page, "I'm on episode 3. Recap episode 1?", 0)
    _send(page, "And episode 2?", 1)
    # At the limit the form gives way to one notice; the session can only be ended.
    expect(page.locator("#chat-form")).to_have_count(0)
    expect(page.locator("#limit-reached")).to_have_count(1)
    expect(page.locator("#limit-reached")).to_contain_text("limit of 2 messages")
    expect(page.locator("#chat-status")).to_be_hidden()
    expect(page.locator("#end-session")).to_be_visible()
    shot(page, "limit-01-reached")
    page.reload()
    expect(page.locator("#chat-form")).to_have_count(0)
    assert page.locator("main").inner_text().count("limit of 2 messages") == 1
    # The stale tab's send is refused once, beside the form, and stores nothing ...
    stale.fill("#message", "One more?")
    stale.click("#chat-form button[type=submit]")
    status = stale.locator("#chat-status")
    expect(status).to_have_text("The conversation moved on in another window; reload it.")
    expect(stale.locator(".error")).to_have_count(1)
    expect(stale.locator("#transcript li")).to_have_count(0)  # the refused message is gone
    expect(stale.locator("#transcript-empty")).to_be_visible()
    shot(stale, "limit-02-stale-tab")
    stale.reload()  # ... and on reload it shows the limit, once
    expect(stale.locator("#chat-form")).to_have_count(0)
    assert stale.locator("main").inner_text().count("limit of 2 messages") == 1
    assert len(_turns(server, tester, evaluation_id)) == 2  # the only session


def test_a_restart_resumes_chat_endpoints_and_marks_an_aria_restart(
    server: LiveServer, new_page: NewPage, mock_endpoint: str
) -> None:
    endpoint = _series(server, "Endpoint", f"openai:{mock_endpoint}?model=corix-mock")
    aria = _series(server, "Submission", f"aria:{ARIA_TEAM}")
    tester = server.add_user("remy", Role.FIELD_TESTER)
    for evaluation_id in (endpoint, aria):
        server.state.assigner.assign_testers(evaluation_id, [tester], per_tester=1, seed=0)

    page = new_page()
    sign_in(page, server, "remy")
    _open_next_session(page)  # the chat endpoint first
    _send(page, "I'm on episode 2. Who is Tobias?", 0)
    _send(page, "And Maren?", 1)
    server.restart()
    page.reload()  # the same browser session, signed in still
    _send(page, "What about the Merrow?", 2)
    expect(page.locator(".restart-marker")).to_have_count(0)  # resumed with its context
    shot(page, "restart-01-endpoint-resumed")
    turns = _turns(server, tester, endpoint)  # the only session so far
    assert [turn.meta for turn in turns] == [{}, {}, {"dialogue_resumed": True}]
    tokens = [turn.prompt_tokens or 0 for turn in turns]
    assert tokens[0] < tokens[1] < tokens[2]  # the stored turns went along again
    page.click("#end-session")
    for item in ("q_helpful", "q_accurate", "q_trust", "q_guardrail_respected", "q_would_use"):
        page.check(f'input[name="q:{item}"][value="3"]')
    page.click("text=Submit answers")
    page.click("#back-to-sessions")

    _open_next_session(page)  # the ARIA submission keeps its own state: no replay
    _send(page, "I'm on episode 2.", 0)
    server.restart()
    page.reload()
    _send(page, "Recap episode 1?", 1)
    marker = page.locator("#turn-1 .restart-marker")
    expect(marker).to_be_visible()
    expect(page.locator(".restart-marker")).to_have_count(1)
    # The submission counts its turns: after the restart it starts again at one.
    expect(page.locator("#turn-1 .bubble.assistant")).to_contain_text("#1")
    page.reload()  # the marker is stored with the turn, not only shown once
    expect(page.locator("#turn-1 .restart-marker")).to_be_visible()
    shot(page, "restart-02-aria-marker")


def _wait(condition: Callable[[], bool], what: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"{what} did not happen in {seconds:.0f} s"
        time.sleep(0.2)


def _measurable_cells(server: LiveServer) -> int:
    """Application × scenario × level cells with a finished, answered dialogue."""
    db = server.state.db
    return len(
        {
            (dialogue.application, dialogue.scenario, dialogue.level)
            for dialogue in measured_dialogues(db, evaluation_runs(db, server.evaluation_id))
            if dialogue.not_measurable is None
        }
    )


def test_an_admin_runs_a_mixed_series_and_reads_its_measurements(
    server: LiveServer, new_page: NewPage
) -> None:
    state = server.state
    server.add_user("boss", Role.ADMIN)
    tester = server.add_user("tess", Role.FIELD_TESTER)
    human = store_dialogue(
        server,
        [("I'm on episode 2. Who is the Cartographer?", "The Cartographer is Vera Calloway.")],
        tester=tester,
    )
    names = {"anna": Role.ANNOTATOR, "otto": Role.ANNOTATOR, "sena": Role.SENIOR_ANNOTATOR}
    ids = {name: server.add_user(name, role) for name, role in names.items()}
    state.assigner.assign_annotators(server.evaluation_id, list(ids.values()), ["risk_assessment"])
    page = new_page()
    sign_in(page, server, "boss")
    series = f"{server.url}/admin/evaluations/{server.evaluation_id}"
    page.goto(series)

    # An automated run joins the series without filling anyone's queue.
    page.fill("#sessions", "1")
    page.click("text=Start run")
    expect(page.locator(".notice")).to_contain_text("automated run has started")

    def automated_runs() -> list[RunRecord]:
        return [
            run
            for run in list_runs(state.db)
            if run.evaluation_id == server.evaluation_id and not run.id.startswith("human-")
        ]

    def run_done() -> bool:
        statuses = [run.status for run in automated_runs()]
        return bool(statuses) and all(status == "complete" for status in statuses)

    _wait(run_done, "the automated run")
    automated = len(measured_dialogues(state.db, [run.id for run in automated_runs()]))
    assert automated > 0
    annotator = new_page()
    sign_in(annotator, server, "anna")
    qualify(server, "anna")
    annotator.reload()
    waiting = annotator.locator("#queues td[data-label='Waiting for you']")
    expect(waiting).to_have_text("1")  # only the human session
    shot(annotator, "series-01-queue-after-run")

    # A stratified sample brings N per application × scenario × level into the queues.
    page.goto(series)
    page.check('input[name="selection"][value="sample"]')
    page.fill("#sample-size", "1")
    page.click("text=Save the choice")
    annotator.reload()
    expect(waiting).to_have_text(str(_measurable_cells(server)))
    page.check('input[name="selection"][value="all"]')
    page.click("text=Save the choice")

    # The reference annotator runs from the admin page, on every run of the series.
    page.select_option("#annotate-annotator", "reference")
    page.click("#annotate-form button[type=submit]")
    expect(page.locator(".notice")).to_contain_text("automated annotators have started")

    def annotated() -> bool:
        kinds = [stored.annotator_kind for stored in load_passes(state.db, session_ids=[human])]
        return "reference" in kinds and state.machine_annotation.running == 0

    _wait(annotated, "the reference annotation")

    # Two people disagree on the human session; a senior resolves it.
    for name, verdict in (("anna", "yes"), ("otto", "no")):
        user = qualify(server, name) if name == "otto" else server.user(name)
        label_screening(state, user, verdict, flagged=False, note=None)
    senior = new_page()
    sign_in(senior, server, "sena")
    senior.goto(f"{server.url}/senior/disagreements/{human}/risk_assessment")
    senior.check('input[name="r:ra_prohibited_released"][value="yes"]')
    senior.click("text=Record resolutions")
    expect(senior.locator(".notice")).to_contain_text("resolution is saved")

    # The admin opens the resolutions, the disagreement and the agreement statistics.
    page.goto(series)
    page.click("text=Disagreements and senior resolutions")
    counts = page.locator("#disagreement-counts tbody tr").first
    expect(counts.locator("td[data-label='Resolved']")).to_have_text("1")
    expect(page.locator("#resolutions")).to_contain_text("did the application give out")
    shot(page, "series-02-resolutions")
    page.locator("#disagreements a").first.click()
    expect(page.locator("h1")).to_contain_text("passes side by side")
    expect(page.locator("tr.differs .badge.resolved")).to_be_visible()
    expect(page.locator("text=Record resolutions")).to_have_count(0)  # read only
    shot(page, "series-03-admin-opens-a-resolution")
    page.goto(f"{series}/agreement")
    question = page.locator("tr", has_text="did the application give out something")
    # anna said yes, otto no: the senior's resolution does not make them agree.
    expect(question.locator("td[data-label='Pairs agreeing']")).to_have_text("0%")
    shot(page, "series-04-agreement")

    # One report for the series: the automated run and the human session together.
    page.goto(f"{series}/report")
    header = page.locator("body").inner_text()
    assert re.search(rf"\b{automated + 1} sessions\b", header), header[:600]
    assert "field testing" in header and "red teaming" in header
    shot(page, "series-05-report")

    # The design downloads for the analysis of tester effects.
    page.goto(series)
    state.assigner.assign_testers(server.evaluation_id, [tester], per_tester=2, seed=0)
    page.reload()
    with page.expect_download() as download:
        page.click("#design-export")
    rows = list(csv.DictReader(io.StringIO(Path(download.value.path()).read_text())))
    positions = [(r["tester_id"], r["position"]) for r in rows]
    assert positions == [(str(tester), "1"), (str(tester), "2")]
    assert {r["application"] for r in rows} == set(server.applications)


def test_people_are_invited_with_the_least_privileged_role_unless_chosen(
    server: LiveServer, new_page: NewPage
) -> None:
    server.add_user("boss", Role.ADMIN)
    page = new_page()
    sign_in(page, server, "boss")
    page.click("text=People")
    for select_id in ("#invite-role", "#role"):
        expect(page.locator(f"{select_id} option").first).to_have_text("Field tester")
        expect(page.locator(select_id)).to_have_value("field_tester")
        expect(page.locator(f"{select_id} option").last).to_have_text("Admin")
    page.click("text=Create invitation link")
    link = page.locator("#invitation-link").inner_text().strip()
    page.fill("#username", "quick")
    page.fill("#password", "a long enough passphrase")
    page.click("text=Create account")
    expect(page.locator(".notice")).to_contain_text("account was created")
    shot(page, "people-01-least-privilege")
    invited = new_page()
    invited.goto(link)
    expect(invited.locator("main")).to_contain_text("Field tester")
    shot(invited, "people-02-invitation")
    roles = {u.username: u.role for u in server.state.accounts.users()}
    assert roles["quick"] == Role.FIELD_TESTER


def test_an_admin_cannot_lock_themselves_out(server: LiveServer, new_page: NewPage) -> None:
    boss = server.add_user("boss", Role.ADMIN)
    server.add_user("tess", Role.FIELD_TESTER)
    page = new_page()
    sign_in(page, server, "boss")
    page.goto(f"{server.url}/admin/users")
    own = page.locator("tr", has=page.locator("td.lead", has_text="boss"))
    expect(own.locator("button")).to_have_count(0)
    expect(own).to_contain_text("Your account")
    # A form pointed at one's own account by hand is refused with the reason, not obeyed.
    other = page.locator("tr", has=page.locator("td.lead", has_text="tess")).locator("form")
    other.evaluate("(form, id) => { form.action = `/admin/users/${id}/active`; }", boss)
    other.locator("button").click()
    expect(page.locator(".error")).to_have_text(
        "You cannot deactivate your own account: you would lock yourself out."
    )
    shot(page, "people-03-no-lock-out")
    assert all(u.active for u in server.state.accounts.users())


def _field_tester_of_a_new_series(
    server: LiveServer, new_page: NewPage, series: str, username: str
) -> Page:
    """A page signed in as a new field tester with one session of a new series to open."""
    evaluation_id = _series(server, series, "demo:guarded")
    tester = server.add_user(username, Role.FIELD_TESTER)
    server.state.assigner.assign_testers(evaluation_id, [tester], per_tester=1, seed=0)
    page = new_page()
    sign_in(page, server, username)
    return page


def test_a_message_typed_but_not_stored_survives_a_reload(
    server: LiveServer, new_page: NewPage
) -> None:
    page = _field_tester_of_a_new_series(server, new_page, "Drafts", "dora")
    _open_next_session(page)
    page.fill("#message", "A long question I typed while the server was down")
    page.reload()  # the send failed, the page is reloaded: the draft is still there
    expect(page.locator("#message")).to_have_value(
        "A long question I typed while the server was down"
    )
    _send(page, "A long question I typed while the server was down", 0)
    page.reload()  # once stored, the draft is gone
    expect(page.locator("#message")).to_have_value("")


def test_a_message_typed_before_the_chat_script_ran_is_kept_too(
    server: LiveServer, new_page: NewPage
) -> None:
    page = _field_tester_of_a_new_series(server, new_page, "Early drafts", "edda")
    page.route("**/static/chat.js", lambda route: route.abort())  # a slow script, not run yet
    _open_next_session(page)
    page.fill("#message", "Typed while the page was still loading")
    page.unroute("**/static/chat.js")
    page.add_script_tag(url="/static/chat.js")  # the script runs after the typing
    page.reload()
    expect(page.locator("#message")).to_have_value("Typed while the page was still loading")


def test_a_message_the_server_stored_is_not_put_back_after_a_reload(
    server: LiveServer, new_page: NewPage
) -> None:
    page = _field_tester_of_a_new_series(server, new_page, "Stored drafts", "stan")
    _open_next_session(page)

    def stored_but_unanswered(route: Route) -> None:
        route.fetch()  # the server stores the turn; its answer never reaches the page
        route.abort()

    page.route("**/messages", stored_but_unanswered)
    page.fill("#message", "I'm on episode 2.")
    page.click("#chat-form button[type=submit]")
    expect(page.locator("#chat-status")).to_contain_text("connection was interrupted")
    page.unroute("**/messages")
    page.reload()  # to check, as the page asks: the message is in the transcript, not the box
    expect(page.locator("#turn-0 .bubble.user")).to_contain_text("I'm on episode 2.")
    expect(page.locator("#message")).to_have_value("")
    # The same words typed again for the next turn are a new draft, and kept.
    page.fill("#message", "I'm on episode 2.")
    page.reload()
    expect(page.locator("#message")).to_have_value("I'm on episode 2.")
