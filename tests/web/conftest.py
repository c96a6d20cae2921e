"""Fixtures for the web testbed tests (helpers live in ``web_support``)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

import pytest
from web_support import Browser, World, build_world

from corix.storage import Database


@pytest.fixture
def world(request: pytest.FixtureRequest) -> World:
    """The populated series, on SQLite; a test changes how it is built with
    ``@pytest.mark.parametrize("world", [{...build_world's keywords...}], indirect=True)``,
    and ``"backend": "postgres"`` among them builds it on PostgreSQL."""
    settings = dict(getattr(request, "param", {}))
    db: Database = request.getfixturevalue(f"{settings.pop('backend', 'sqlite')}_db")
    return build_world(db, **settings)


@pytest.fixture
async def browser(world: World) -> AsyncIterator[Callable[[], Browser]]:
    """Makes browsers for ``world``'s app; closes them and the live applications after."""
    made: list[Browser] = []

    def make() -> Browser:
        made.append(Browser(world.app))
        return made[-1]

    yield make
    for each in made:
        await each.aclose()
    await world.state.live.close()
