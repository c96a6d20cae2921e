"""Fixtures for the web testbed tests (helpers live in ``web_support``)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

import pytest
from web_support import Browser, World, build_world

from corix.storage import Database


@pytest.fixture
def world(sqlite_db: Database, request: pytest.FixtureRequest) -> World:
    """The populated series; a test changes how it is built with
    ``@pytest.mark.parametrize("world", [{...build_world's keywords...}], indirect=True)``."""
    return build_world(sqlite_db, **getattr(request, "param", {}))


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
