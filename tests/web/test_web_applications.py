"""Applications with a lifecycle: checked at registration, versioned, retired, failures shown."""

from __future__ import annotations

import time
from collections.abc import Callable

from web_support import Browser, World, move_every_assignment, say, start_next_session

from corix.storage import next_version_name
from corix.storage.applications import list_applications
from corix.storage.web import assignments, transaction
from corix.storage.web.applications import ApplicationInfo, overview
from corix.storage.web.assignments import AssignmentRecord

MakeBrowser = Callable[[], Browser]
DEAD_ENDPOINT = "openai:http://127.0.0.1:9/v1?model=zz-hidden-model&max_retries=0&timeout_s=2"


async def _admin(browser: MakeBrowser) -> Browser:
    b = browser()
    await b.login("admin")
    return b


def _names(world: World) -> set[str]:
    """The names of every stored application, of any series or none."""
    return {application.name for application in list_applications(world.state.db)}


def _application(world: World, name: str) -> ApplicationInfo:
    (found,) = [a for a in overview(world.state.db, world.evaluation_id) if a.name == name]
    return found


def _assignments(world: World) -> list[AssignmentRecord]:
    with transaction(world.state.db) as tx:
        return assignments.of_series(tx, world.evaluation_id)


async def test_registration_refuses_an_application_that_fails_its_check(
    world: World, browser: MakeBrowser
) -> None:
    b = await _admin(browser)
    url = f"/admin/evaluations/{world.evaluation_id}/applications"
    before = _names(world)
    unknown = await b.post(url, {"name": "Ghost", "spec": "demo:nonexistent"})
    assert unknown.status_code == 422
    assert "unknown demo variant &#39;nonexistent&#39;" in unknown.text
    started = time.perf_counter()
    dead = await b.post(url, {"name": "Dead", "spec": DEAD_ENDPOINT})
    assert dead.status_code == 422 and time.perf_counter() - started < 5
    # A sentence, not a library's error text.
    assert "nothing is listening at 127.0.0.1:9 (is the server running" in dead.text
    assert "ClientConnectorError" not in dead.text
    unknown_host = await b.post(
        url, {"name": "Nowhere", "spec": "openai:http://no-such-host.invalid/v1?model=m"}
    )
    assert unknown_host.status_code == 422
    assert "the host name &#39;no-such-host.invalid&#39; is not known" in unknown_host.text
    assert _names(world) == before  # nothing stored

    ok = await b.post(url, {"name": "Plain Bot", "spec": "demo:guarded"})
    assert ok.headers["location"].endswith("notice=application_registered")
    plain = _application(world, "Plain Bot")
    assert plain.version is not None and plain.version.startswith("corix-demo")
    assert plain.check is not None and plain.check.ok is True
    assert [step.name for step in plain.check.steps][:2] == ["open", "version"]


async def test_editing_makes_a_new_version_and_moves_unstarted_assignments(
    world: World, browser: MakeBrowser
) -> None:
    world.assign_tester("felix", per_tester=2)
    old_id = world.applications["Acme Sentinel"]
    b = await _admin(browser)
    refused = await b.post(f"/admin/applications/{old_id}/versions", {"spec": "demo:nonexistent"})
    assert refused.status_code == 422 and "Acme Sentinel v2" not in _names(world)

    edited = await b.post(f"/admin/applications/{old_id}/versions", {"spec": "demo:unguarded"})
    assert edited.headers["location"].endswith("notice=application_versioned")
    new = _application(world, "Acme Sentinel v2")
    old = _application(world, "Acme Sentinel")
    assigned = {slot.application_id for slot in _assignments(world)}
    assert new.spec == "demo:unguarded"
    assert old.id == old_id and old.replaced_by == new.name and old.retired
    assert old_id not in assigned and new.id in assigned
    page = await b.get(f"/admin/evaluations/{world.evaluation_id}")
    assert "replaced by Acme Sentinel v2" in page.text
    again = await b.post(f"/admin/applications/{old_id}/versions", {"spec": "demo:guarded"})
    assert again.status_code == 409  # a replaced version is not edited again


async def test_retiring_withdraws_unstarted_assignments_and_new_ones_skip_it(
    world: World, browser: MakeBrowser
) -> None:
    world.assign_tester("felix", per_tester=2)
    # The application felix would meet first.
    (retired,) = [slot.application_id for slot in _assignments(world) if slot.position == 1]
    b = await _admin(browser)
    unconfirmed = await b.post(f"/admin/applications/{retired}/retire")
    assert unconfirmed.status_code == 422 and "to confirm" in unconfirmed.text
    done = await b.post(f"/admin/applications/{retired}/retire", {"confirm": "yes"})
    assert done.headers["location"].endswith("notice=application_retired")
    world.assign_tester("fay", per_tester=1)
    rows = _assignments(world)
    assert rows and retired not in {row.application_id for row in rows}
    for user in ("felix", "fay"):  # sessions stay numbered 1, 2, … without gaps
        positions = sorted(r.position for r in rows if r.user_id == world.user(user).id)
        assert positions == list(range(1, len(positions) + 1))
    page = await b.get(f"/admin/evaluations/{world.evaluation_id}")
    assert "retired" in page.text and f"/admin/applications/{retired}/retire" not in page.text


async def test_failures_during_the_series_are_shown_to_the_admin(
    world: World, browser: MakeBrowser
) -> None:
    # An endpoint that passed its check at registration and went down later.
    broken = world.state.evaluations.register_application(
        world.evaluation_id, name="Flaky Endpoint", spec=DEAD_ENDPOINT, credentials_json=""
    )
    world.assign_tester("fay", per_tester=1)
    move_every_assignment(world, broken)
    tester = browser()
    await tester.login("fay")
    token = await start_next_session(tester)
    assert (await say(tester, token, "Hello?", 0)).json()["failed"] is True

    page = await (await _admin(browser)).get(f"/admin/evaluations/{world.evaluation_id}")
    row = page.text.split(f'data-application="{broken}"', 1)[1].split("</tr>", 1)[0]
    assert "1 session with errors" in row and "127.0.0.1:9" in row


def test_version_names_count_up_and_skip_names_in_use() -> None:
    assert next_version_name("Acme", set()) == "Acme v2"
    assert next_version_name("Acme v2", set()) == "Acme v3"
    assert next_version_name("Acme", {"Acme v2", "Acme v3"}) == "Acme v4"
