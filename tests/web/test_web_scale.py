"""The admin's side at the scale of a real evaluation: thousands of testers chosen in one
form, integer fields no column can hold, series that own their applications' names."""

from __future__ import annotations

import pytest
from web_support import Browser, build_world

from corix.domain import Level
from corix.storage import Database
from corix.storage.web import accounts as account_store
from corix.storage.web import assignments, series, transaction
from corix.web import Role
from corix.web.services import EvaluationSettings, InputError


def _many_testers(db: Database, n: int) -> list[str]:
    """``n`` field testers stored at once (hashing each password would take minutes)."""
    names = [f"tester{k:05d}" for k in range(n)]
    with transaction(db) as tx:
        for name in names:
            account_store.add_user(tx, name, "not-a-usable-hash", Role.FIELD_TESTER.value)
    return names


def _assignments(db: Database) -> int:
    """The assignments of every series."""
    every = [evaluation.id for evaluation in series.all_series(db)]
    with transaction(db) as tx:
        return sum(len(assignments.of_series(tx, evaluation_id)) for evaluation_id in every)


@pytest.mark.parametrize("how", ["everyone", pytest.param("usernames", marks=pytest.mark.slow)])
async def test_five_thousand_testers_are_assigned_in_one_submit(
    sqlite_db: Database, how: str
) -> None:
    world = build_world(sqlite_db)
    names = _many_testers(sqlite_db, 5000)
    b = Browser(world.app)
    try:
        await b.login("admin")
        page = await b.get(f"/admin/evaluations/{world.evaluation_id}")
        assert 'id="testers-everyone"' in page.text and "tester04999" not in page.text
        form = {"everyone": "true"} if how == "everyone" else {"usernames": "\n".join(names)}
        done = await b.post(f"/admin/evaluations/{world.evaluation_id}/assignments", form)
    finally:
        await b.aclose()
    assert done.status_code == 303, done.text[:500]
    # Everyone: the 5,000 and the three testers of the world; the list: the 5,000.
    assert _assignments(sqlite_db) == (5003 if how == "everyone" else 5000)


async def test_unknown_usernames_are_refused_by_name(sqlite_db: Database) -> None:
    world = build_world(sqlite_db)
    b = Browser(world.app)
    try:
        await b.login("admin")
        refused = await b.post(
            f"/admin/evaluations/{world.evaluation_id}/assignments",
            {"usernames": "felix, nobody1\nanna"},
        )
    finally:
        await b.aclose()
    assert refused.status_code == 422
    assert "nobody1, anna" in refused.text and _assignments(sqlite_db) == 0


async def test_integers_no_column_can_hold_are_refused_with_422(any_db: Database) -> None:
    world = build_world(any_db)
    url = f"/admin/evaluations/{world.evaluation_id}"
    b = Browser(world.app)
    huge = str(2**31)
    try:
        await b.login("admin")
        for path, form in [
            ("/assignments", {"testers": huge}),
            ("/assignments", {"testers": str(world.user("felix").id), "seed": "1e99"}),
            ("/assignments", {"testers": "-1"}),
            ("/annotators", {"annotators": huge, "categories": "risk_assessment"}),
            ("/assignments/redraw", {"seed": huge}),
            ("/runs", {"levels": "model_testing", "sessions": huge}),
        ]:
            response = await b.post(url + path, form)
            assert response.status_code == 422, (path, form, response.status_code)
        created = await b.post(
            "/admin/evaluations",
            {
                "name": "Huge",
                "scenarios": "tv_spoilers",
                "levels": "field_testing",
                "passes_per_item": huge,
                "max_turns": huge,
            },
        )
        assert created.status_code == 422
    finally:
        await b.aclose()


def test_each_series_owns_its_applications_names(any_db: Database) -> None:
    world = build_world(any_db)
    evaluations = world.state.evaluations
    other = evaluations.create(
        "Second series",
        description="",
        scenarios=["tv_spoilers"],
        levels=[Level.FIELD_TESTING],
        settings=EvaluationSettings(),
    )
    # The first series has an "Acme Sentinel"; the second may have its own.
    second = evaluations.register_application(
        other, name="Acme Sentinel", spec="demo:unguarded", credentials_json=""
    )
    assert second != world.applications["Acme Sentinel"]
    assert [a.spec for a in evaluations.applications(other)] == ["demo:unguarded"]
    with pytest.raises(InputError, match="exists already"):
        evaluations.register_application(
            other, name="Acme Sentinel", spec="demo:guarded", credentials_json=""
        )
