"""The authorization matrix: every route × every role (and nobody signed in).

Each role reaches only its own pages and only its own items; every other request gets 403
or a redirect to the sign-in page. Routes are read from the app itself, so a new route is
checked without anyone remembering to add it here.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from fastapi.routing import APIRoute
from web_support import Browser, World, claim, complete_session, qualify

from corix.storage import load_passes
from corix.web import Role, routes
from corix.web.services import human_run_id

MakeBrowser = Callable[[], Browser]
PUBLIC = {"/", "/healthz", "/login", "/logout", "/invite/{token}"}
ALLOWED = {
    "/admin": {Role.ADMIN},
    "/tester": {Role.RED_TEAMER, Role.FIELD_TESTER},
    "/annotate": {Role.ANNOTATOR, Role.SENIOR_ANNOTATOR},
    "/senior": {Role.SENIOR_ANNOTATOR},
}
PEOPLE = {
    None: None,
    Role.ADMIN: "admin",
    Role.RED_TEAMER: "rita",
    Role.FIELD_TESTER: "felix",
    Role.ANNOTATOR: "anna",
    Role.SENIOR_ANNOTATOR: "sena",
}


def _routes() -> list[tuple[str, str]]:
    """(method, path) of every route of every router module the app includes."""
    found: list[tuple[str, str]] = []
    for name in routes.__all__:
        for route in getattr(routes, name).router.routes:
            assert isinstance(route, APIRoute)
            found.extend((method, route.path) for method in sorted(route.methods or ()))
    return found


def _allowed(path: str) -> set[Role] | None:
    """The roles a path is for; ``None`` for public paths."""
    if path in PUBLIC:
        return None
    prefix = "/" + path.split("/")[1]
    return ALLOWED[prefix]


def test_every_route_is_covered_by_the_matrix(world: World) -> None:
    for _method, path in _routes():
        assert path in PUBLIC or "/" + path.split("/")[1] in ALLOWED, path


async def _populate(world: World, browser: MakeBrowser) -> dict[Role | None, dict[str, str]]:
    """Items of each role's own, as path parameter values."""
    ids = [world.user(n).id for n in ("anna", "sena")]
    world.state.assigner.assign_annotators(world.evaluation_id, ids, ["risk_assessment"])
    session = await complete_session(world, "fay", ["I'm on episode 2. Recap episode 1?"])
    for name in ("felix", "rita"):
        world.assign_tester(name)
    tasks = {}
    for name in ("anna", "sena"):
        b = browser()
        await b.login(name)
        await qualify(world, b)
        tasks[name] = await claim(b, "risk_assessment")
    anna = browser()
    await anna.login("anna")
    await anna.post(
        f"/annotate/tasks/{tasks['anna']}",
        {"a:ra_prohibited_released": "no", "a:ra_permitted_withheld": "no"},
    )
    (made,) = load_passes(world.state.db)
    pass_id = made.id
    victim = world.add_user("victim", Role.FIELD_TESTER)
    common = {
        "evaluation_id": world.evaluation_id,
        # Registered after the assignments: retiring it in the matrix withdraws none.
        "application_id": str(
            world.state.evaluations.register_application(
                world.evaluation_id, name="Spare Bot", spec="demo:guarded", credentials_json=""
            )
        ),
        "run_id": human_run_id(world.evaluation_id),
        "user_id": str(victim.id),
        "session_id": session,
        "category": "risk_assessment",
        "pass_id": str(pass_id),
        "token": world.state.testers.assignments(world.user("felix"))[0].token,
        "queue_id": str(world.state.queue.queues(world.user("anna"))[0].id),
    }
    own = {
        Role.RED_TEAMER: {"token": world.state.testers.assignments(world.user("rita"))[0].token},
        Role.ANNOTATOR: {"token": str(tasks["anna"])},
        Role.SENIOR_ANNOTATOR: {
            "token": str(tasks["sena"]),
            "queue_id": str(world.state.queue.queues(world.user("sena"))[0].id),
        },
    }
    values: dict[Role | None, dict[str, str]] = {
        role: {**common, **own.get(role, {})} for role in Role
    }
    values[None] = common
    return values


def _fill(path: str, values: dict[str, str]) -> str:
    return re.sub(r"\{(\w+)\}", lambda m: values[m.group(1)], path)


async def test_each_role_reaches_only_its_pages(world: World, browser: MakeBrowser) -> None:
    values = await _populate(world, browser)
    checked = 0
    for role, person in PEOPLE.items():
        b = browser()
        if person is not None:
            await b.login(person)
        else:
            await b.get("/login")
        for method, path in _routes():
            if path == "/logout":
                continue  # would end the session the rest of the matrix runs in
            url = _fill(path, values[role])
            response = await (b.get(url) if method == "GET" else b.post(url, {}))
            where = (role, method, path, response.status_code)
            allowed = _allowed(path)
            if allowed is None:
                assert response.status_code < 500, where
            elif role is None:
                assert response.status_code == 303, where
                assert response.headers["location"].startswith("/login"), where
            elif role in allowed:
                assert response.status_code != 403, where
                to_login = response.headers.get("location", "").startswith("/login")
                assert not to_login, where
                assert response.status_code not in (404, 405), where  # the route exists
                assert response.status_code < 500, where
            else:
                assert response.status_code == 403, where
            checked += 1
    assert checked >= 6 * 40


async def test_nobody_reaches_another_persons_items(world: World, browser: MakeBrowser) -> None:
    values = await _populate(world, browser)
    rita, anna, sena = browser(), browser(), browser()
    for b, name in ((rita, "rita"), (anna, "anna"), (sena, "sena")):
        await b.login(name)
    felix_token = values[Role.FIELD_TESTER]["token"]
    for url in (
        f"/tester/a/{felix_token}",
        f"/tester/a/{felix_token}/chat",
        f"/tester/a/{felix_token}/questionnaire",
    ):
        assert (await rita.get(url)).status_code == 403, url
    for url in (
        f"/tester/a/{felix_token}/start",
        f"/tester/a/{felix_token}/messages",
        f"/tester/a/{felix_token}/end",
    ):
        assert (await rita.post(url, {"consent": "yes", "message": "hi"})).status_code == 403
    sena_task = values[Role.SENIOR_ANNOTATOR]["token"]
    sena_queue = values[Role.SENIOR_ANNOTATOR]["queue_id"]
    assert (await anna.get(f"/annotate/tasks/{sena_task}")).status_code == 403
    assert (await anna.post(f"/annotate/tasks/{sena_task}/skip")).status_code == 403
    assert (await anna.post(f"/annotate/queues/{sena_queue}/next")).status_code == 403
    anna_task = values[Role.ANNOTATOR]["token"]
    assert (await sena.get(f"/annotate/tasks/{anna_task}")).status_code == 403
    # A senior cannot review their own pass.
    assert (await sena.get("/annotate")).status_code == 200
    unknown = await rita.get("/tester/a/no-such-token")
    assert unknown.status_code == 404
