"""An application's new version runs by its name from the web's "Start run"."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from web_support import Browser, World

from corix.storage import list_runs, run_applications
from corix.storage.applications import list_applications


async def test_an_automated_run_of_an_edited_application_runs_its_new_version(
    world: World, browser: Callable[[], Browser]
) -> None:
    b = browser()
    await b.login("admin")
    old_id = world.applications["Acme Sentinel"]
    edited = await b.post(f"/admin/applications/{old_id}/versions", {"spec": "demo:unguarded"})
    assert edited.headers["location"].endswith("notice=application_versioned")
    url = f"/admin/evaluations/{world.evaluation_id}"
    started = await b.post(f"{url}/runs", {"levels": ["model_testing"], "seed": "1"})
    assert started.headers["location"] == f"{url}?notice=run_started"
    for _ in range(600):
        if world.state.automation.running == 0:
            break
        await asyncio.sleep(0.05)
    db = world.state.db
    (run,) = [
        run
        for run in list_runs(db)
        if run.evaluation_id == world.evaluation_id and not run.id.startswith("human-")
    ]
    used = run_applications(db, run.id)
    names = [application.name for application in list_applications(db)]
    assert run.status == "complete", run.summary.error
    assert "Acme Sentinel v2" in used and "Acme Sentinel" not in used
    assert len(names) == len(set(names))  # no second row under a version's name
