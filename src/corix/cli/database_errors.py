"""Opening the database named by ``--db``, with one clear line when that is impossible."""

from __future__ import annotations

from sqlalchemy.exc import ArgumentError, DBAPIError, NoSuchModuleError, SQLAlchemyError

from corix.errors import CorixError
from corix.storage import Database, DatabaseMissingError, SchemaUpgradeError

__all__ = ["DatabaseUnavailableError", "database_label", "open_database"]

# Databases SQLAlchemy knows that corix does not store in (it needs their drivers to say so).
OTHER_KINDS = ("mysql", "mariadb", "oracle", "mssql")
POSTGRES_HINT = "PostgreSQL needs the 'postgres' extra: pip install 'corix[postgres]'"


class DatabaseUnavailableError(CorixError):
    """The ``--db`` URL is malformed, its driver is missing or its server cannot be used."""


def open_database(url: str, *, create: bool = False) -> Database:
    """Open (and migrate) ``url``; every failure becomes a ``DatabaseUnavailableError``.

    Only commands that make records pass ``create=True``: reading never creates a database.
    """
    kind = url.partition("://")[0].partition("+")[0].lower()
    if kind == "postgres":
        raise DatabaseUnavailableError("write postgresql://…, not postgres://…")
    if kind in OTHER_KINDS:
        raise DatabaseUnavailableError(
            f"corix stores its records in SQLite or PostgreSQL, not '{kind}': give "
            "sqlite:///FILE or postgresql://HOST/NAME"
        )
    try:
        return Database(url, create=create)
    except DatabaseMissingError:
        raise
    except ModuleNotFoundError as exc:
        hint = f"; {POSTGRES_HINT}" if url.startswith("postgres") else ""
        raise DatabaseUnavailableError(
            f"the database driver '{exc.name}' is not installed{hint}"
        ) from exc
    except (ArgumentError, NoSuchModuleError, ValueError) as exc:
        raise DatabaseUnavailableError(
            f"malformed database URL: {exc} (expected sqlite:///FILE or postgresql://…)"
        ) from exc
    except DBAPIError as exc:
        raise DatabaseUnavailableError(
            f"cannot open the database {database_label(url)}: {_first_line(exc.orig)}"
        ) from exc
    except (SQLAlchemyError, SchemaUpgradeError) as exc:
        raise DatabaseUnavailableError(
            f"cannot use the database {database_label(url)}: {_first_line(exc)}"
        ) from exc


def database_label(url: str) -> str:
    """The database as a person finds it: a SQLite file's path, else the URL (no password)."""
    from sqlalchemy.engine import make_url

    try:
        parsed = make_url(url)
    except ArgumentError:
        return f"'{url}'"
    if parsed.get_backend_name() == "sqlite" and parsed.database:
        return f"file '{parsed.database}'"
    return f"'{parsed.render_as_string(hide_password=True)}'"


def _first_line(exc: BaseException | None) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__
