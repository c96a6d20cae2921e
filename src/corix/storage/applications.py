"""Applications under test: registered by name and spec, versioned, never rewritten."""

from __future__ import annotations

import re

from sqlalchemy import select
from sqlalchemy.orm import Session

from corix.domain import JsonObject
from corix.errors import CorixError
from corix.storage.database import Database
from corix.storage.orm import ApplicationRow, EvaluationRow
from corix.storage.store_records import ApplicationRecord
from corix.storage.text import storable_text

__all__ = ["application_conflict", "ensure_application", "list_applications", "next_version_name"]

VERSION_SUFFIX = re.compile(r"\s+v(\d+)$")
VERSION_CHARS = 200
"""The longest application version stored (the column's width)."""


def _version_base(name: str) -> str:
    found = VERSION_SUFFIX.search(name)
    return name[: found.start()] if found else name


def next_version_name(name: str, taken: set[str]) -> str:
    """``Acme`` → ``Acme v2``, ``Acme v2`` → ``Acme v3``, skipping names already in use."""
    found = VERSION_SUFFIX.search(name)
    base = name[: found.start()] if found else name
    number = int(found.group(1)) + 1 if found else 2
    while f"{base} v{number}" in taken:
        number += 1
    return f"{base} v{number}"


def web_conflict_message(name: str, evaluation: str) -> str:
    return (
        f"application '{name}' belongs to the web evaluation '{evaluation}' with another "
        "spec; give this plan's application another name"
    )


def _family(s: Session, name: str) -> list[ApplicationRow]:
    """Every version of the application ``name`` names (``Acme``, ``Acme v2``…), whichever
    of them it names."""
    base = _version_base(name)
    named = s.scalars(
        select(ApplicationRow).where(
            (ApplicationRow.name == base) | ApplicationRow.name.like(f"{base} v%")
        )
    ).all()
    return [row for row in named if _version_base(row.name) == base]


def spec_change_message(name: str, same_spec: str | None) -> str:
    where = f"; its version with this spec is '{same_spec}': name that one" if same_spec else ""
    return (
        f"application '{name}' is stored with another spec{where}, or set "
        "'new_version: true' on it in the plan to register this spec as a new version"
    )


def _web_owner(s: Session, application: ApplicationRow | None) -> str | None:
    """The name of the web evaluation ``application`` belongs to, if it belongs to one."""
    if application is None or application.evaluation_id is None:
        return None
    evaluation = s.get(EvaluationRow, application.evaluation_id)
    return evaluation.name if evaluation is not None else application.evaluation_id


def ensure_application(
    db: Database,
    name: str,
    spec: str,
    *,
    version: str | None = None,
    auth: JsonObject | None = None,
    new_version: bool = False,
) -> int:
    """The id of the application ``name`` with ``spec``, registered if need be.

    Any version runs by its name (``Acme v2``). A stored application is never
    rewritten: the same name with another spec is refused (:class:`CorixError`) unless
    ``new_version``, which registers the spec as the family's next version (``<name>
    v2``, ``v3``…) or reuses the version that already has it, so sessions already
    stored keep the application they used. An application that belongs to a web
    evaluation is never reused with another spec either: that is an error naming both.
    """
    if version is not None:  # what the application says it is: untrusted, bounded
        version = storable_text(version)[:VERSION_CHARS]
    with db.session() as s:
        family = _family(s, name)
        current = next((row for row in family if row.name == name), None)
        same = [row for row in family if row.spec == spec]
        if current is not None and current.spec != spec and not new_version:
            owner = _web_owner(s, current)
            if owner is not None:
                raise CorixError(web_conflict_message(name, owner))
            raise CorixError(spec_change_message(name, same[-1].name if same else None))
        if current is not None and current.spec == spec:
            same = [current]
        if same:
            row = max(same, key=lambda r: r.id)
            if row.evaluation_id is None:
                row.version = version or row.version
                if auth is not None:
                    row.auth = auth
            return row.id
        owner = _web_owner(s, current)
        if owner is not None:
            raise CorixError(web_conflict_message(name, owner))
        taken = {row.name for row in family}
        new_name = name if current is None else next_version_name(name, taken)
        row = ApplicationRow(name=new_name, spec=spec, version=version, auth=auth)
        s.add(row)
        s.flush()
        return row.id


def _version_problem(name: str, family: list[ApplicationRow]) -> str | None:
    """Why a plan may not name ``name``: a version that does not exist (``Acme v9`` when
    only ``Acme`` and ``Acme v2`` do), or a first registration under a version's name
    (``fresh v3``), which would make a family whose base nobody can name."""
    found = VERSION_SUFFIX.search(name)
    if found is None or any(row.name == name for row in family):
        return None
    base = name[: found.start()]
    if family:
        versions = ", ".join(sorted((row.name for row in family), key=_version_order))
        return f"application '{name}' is not stored; the versions of '{base}' are: {versions}"
    return (
        f"application '{name}' is not stored, and a new application may not be named like a "
        f"version: register it as '{base}' (later versions get ' v2', ' v3'… from "
        "'new_version: true')"
    )


def _version_order(name: str) -> int:
    found = VERSION_SUFFIX.search(name)
    return int(found.group(1)) if found else 1


def application_conflict(db: Database, name: str, spec: str, *, new_version: bool) -> str | None:
    """Why :func:`ensure_application` would refuse ``name`` with ``spec`` for a plan, or
    ``None``."""
    with db.session() as s:
        family = _family(s, name)
        if (problem := _version_problem(name, family)) is not None:
            return problem
        current = next((row for row in family if row.name == name), None)
        if current is None or current.spec == spec:
            return None
        owner = _web_owner(s, current)
        if owner is not None:
            return web_conflict_message(name, owner)
        if new_version:
            return None
        same = [row.name for row in family if row.spec == spec]
        return spec_change_message(name, same[-1] if same else None)


def list_applications(db: Database) -> list[ApplicationRecord]:
    with db.session() as s:
        rows = s.scalars(select(ApplicationRow).order_by(ApplicationRow.name))
        return [
            ApplicationRecord(
                row.id, row.name, row.spec, row.version, row.evaluation_id, row.created_at
            )
            for row in rows
        ]
