"""Shared fixtures: real SQLite files and a real PostgreSQL database per test."""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from corix.storage import Database

PG_ADMIN_URL = os.environ.get(
    "CORIX_TEST_PG_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
)


def _postgres_available() -> str | None:
    """None if PostgreSQL answers, else the reason it cannot be used."""
    try:
        engine = create_engine(PG_ADMIN_URL, connect_args={"connect_timeout": 3})
        with engine.connect() as connection:
            connection.execute(text("select 1"))
        engine.dispose()
    except Exception as exc:
        return f"no PostgreSQL server at {PG_ADMIN_URL}: {type(exc).__name__}"
    return None


_PG_UNAVAILABLE = _postgres_available()

# Fixtures that start something heavy once per module (a Ray cluster): their tests run on
# one pytest-xdist worker (`--dist loadgroup`), so two workers never start two of them at
# once on a two-core machine.
_SHARED_HEAVY_FIXTURES = {"local_ray": "ray"}


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        for fixture in getattr(item, "fixturenames", ()):
            if fixture in _SHARED_HEAVY_FIXTURES:
                item.add_marker(pytest.mark.xdist_group(_SHARED_HEAVY_FIXTURES[fixture]))
                break
    # Groups are long (the Ray tests take two minutes on one worker): started first, they
    # run while the other worker takes the single tests, instead of ending the run alone.
    items.sort(key=lambda item: item.get_closest_marker("xdist_group") is None)


def pytest_collection_finish(session: pytest.Session) -> None:
    """On a `--dist loadgroup` worker, every grouped test must carry its group in its node
    id (how pytest-xdist routes it); a pytest that drops the tag would split the groups."""
    if not getattr(session.config.option, "loadgroup", False):
        return
    for item in session.items:
        if item.get_closest_marker("xdist_group") and "@" not in item.nodeid:
            raise pytest.UsageError(
                f"pytest-xdist did not tag {item.nodeid} with its xdist_group: this pytest "
                "and pytest-xdist do not group tests (see the pin in pyproject.toml)"
            )


@pytest.fixture
def sqlite_db(tmp_path: Path) -> Iterator[Database]:
    db = Database(f"sqlite:///{tmp_path / 'corix.db'}")
    yield db
    db.dispose()


def _create_database(name: str, template: str | None = None) -> None:
    admin = create_engine(PG_ADMIN_URL, isolation_level="AUTOCOMMIT")
    from_template = f' TEMPLATE "{template}"' if template else ""
    with admin.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"{from_template}'))
    admin.dispose()


def _drop_database(name: str) -> None:
    admin = create_engine(PG_ADMIN_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


def _database_url(name: str) -> str:
    return f"{PG_ADMIN_URL.rsplit('/', 1)[0]}/{name}"


@pytest.fixture(scope="session")
def postgres_databases() -> Iterator[Callable[[], str]]:
    """Makes fresh, migrated, empty PostgreSQL databases and returns their URLs; each is a
    copy of one template migrated once per test session, and all are dropped at its end."""
    if _PG_UNAVAILABLE:
        if os.environ.get("CI"):
            pytest.fail(_PG_UNAVAILABLE)
        pytest.skip(_PG_UNAVAILABLE)
    template = f"corix_template_{uuid.uuid4().hex[:12]}"
    _create_database(template)
    Database(_database_url(template)).dispose()  # migrates; no connection may stay open
    made: list[str] = []

    def make() -> str:
        name = f"corix_test_{uuid.uuid4().hex[:12]}"
        _create_database(name, template=template)
        made.append(name)
        return _database_url(name)

    yield make
    for name in [*made, template]:
        _drop_database(name)


@pytest.fixture
def postgres_url(postgres_databases: Callable[[], str]) -> Iterator[str]:
    """A fresh, migrated, empty PostgreSQL database, dropped afterwards."""
    url = postgres_databases()
    yield url
    _drop_database(url.rsplit("/", 1)[1])


@pytest.fixture
def empty_postgres_url() -> Iterator[str]:
    """A new PostgreSQL database with no schema at all (not migrated), dropped afterwards."""
    if _PG_UNAVAILABLE:
        pytest.skip(_PG_UNAVAILABLE)
    name = f"corix_empty_{uuid.uuid4().hex[:12]}"
    _create_database(name)
    yield _database_url(name)
    _drop_database(name)


@pytest.fixture
def postgres_db(postgres_url: str) -> Iterator[Database]:
    db = Database(postgres_url)
    yield db
    db.dispose()


@pytest.fixture(params=["sqlite", "postgres"])
def any_db(request: pytest.FixtureRequest) -> Database:
    """Runs a storage test on both backends."""
    fixture = "sqlite_db" if request.param == "sqlite" else "postgres_db"
    db: Database = request.getfixturevalue(fixture)
    return db
