"""Accounts: people who sign in, their signed-in browsers and invitation links.

Secrets are stored as digests only; callers hand in the digest, never the token.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from sqlalchemy import delete, select, update

from corix.storage.clock import is_past, utcnow
from corix.storage.database import Database
from corix.storage.orm_web import InvitationRow, LoginSessionRow, UserRow
from corix.storage.transactions import Transaction, transaction

__all__ = [
    "InvitationRecord",
    "InvitationState",
    "UserRecord",
    "accept_invitation",
    "add_invitation",
    "add_login",
    "add_user",
    "delete_login",
    "invitation",
    "pending_invitations",
    "set_active",
    "set_password_hash",
    "set_role",
    "user_for_login",
    "user_for_sign_in",
    "users",
    "users_by_id",
]


@dataclass(frozen=True, slots=True)
class UserRecord:
    id: int
    username: str
    role: str
    active: bool
    created_at: datetime


@dataclass(frozen=True, slots=True)
class InvitationRecord:
    id: int
    role: str
    expires_at: datetime
    used_at: datetime | None


class InvitationState(StrEnum):
    """Why an invitation cannot be accepted."""

    UNKNOWN = "unknown"
    USED = "used"
    EXPIRED = "expired"


def _user(row: UserRow) -> UserRecord:
    return UserRecord(row.id, row.username, row.role, row.active, row.created_at)


def _invitation(row: InvitationRow) -> InvitationRecord:
    return InvitationRecord(row.id, row.role, row.expires_at, row.used_at)


def add_user(tx: Transaction, username: str, password_hash: str, role: str) -> UserRecord:
    """A new active account; a taken username fails when the unit of work commits."""
    row = UserRow(username=username, password_hash=password_hash, role=role, active=True)
    tx.add(row)
    tx.flush()
    return _user(row)


def user_for_sign_in(db: Database, username: str) -> tuple[UserRecord, str] | None:
    """The account named ``username`` and its password hash, if there is one."""
    with transaction(db) as tx:
        row = tx.scalars(select(UserRow).where(UserRow.username == username)).first()
        return None if row is None else (_user(row), row.password_hash)


def set_password_hash(db: Database, user_id: int, password_hash: str) -> None:
    with transaction(db) as tx:
        tx.execute(update(UserRow).where(UserRow.id == user_id).values(password_hash=password_hash))


def users(db: Database) -> list[UserRecord]:
    """Every account, by role and username."""
    with transaction(db) as tx:
        rows = tx.scalars(select(UserRow).order_by(UserRow.role, UserRow.username))
        return [_user(row) for row in rows]


def users_by_id(tx: Transaction, user_ids: list[int]) -> list[UserRecord]:
    """The accounts among ``user_ids`` that exist, by id."""
    rows = tx.scalars(select(UserRow).where(UserRow.id.in_(user_ids)).order_by(UserRow.id))
    return [_user(row) for row in rows]


def set_role(db: Database, user_id: int, role: str) -> bool:
    """Give an account another role (its past work stays its own); ``False`` if unknown."""
    with transaction(db) as tx:
        row = tx.get(UserRow, user_id)
        if row is None:
            return False
        row.role = role
        return True


def set_active(db: Database, user_id: int, active: bool) -> bool:
    """Enable or disable an account (signing it out everywhere); ``False`` if unknown."""
    with transaction(db) as tx:
        row = tx.get(UserRow, user_id)
        if row is None:
            return False
        row.active = active
        if not active:
            tx.execute(delete(LoginSessionRow).where(LoginSessionRow.user_id == user_id))
        return True


def add_login(
    db: Database, user_id: int, digest: str, created_at: datetime, expires_at: datetime
) -> None:
    """A signed-in browser; the account's expired ones are dropped on the way."""
    with transaction(db) as tx:
        expired = [
            row.token_digest
            for row in tx.scalars(select(LoginSessionRow).where(LoginSessionRow.user_id == user_id))
            if is_past(row.expires_at)
        ]
        if expired:
            tx.execute(delete(LoginSessionRow).where(LoginSessionRow.token_digest.in_(expired)))
        tx.add(
            LoginSessionRow(
                token_digest=digest, user_id=user_id, created_at=created_at, expires_at=expires_at
            )
        )


def user_for_login(db: Database, digest: str) -> UserRecord | None:
    """The active account signed in by ``digest``, unless that sign-in has expired."""
    with transaction(db) as tx:
        found = tx.execute(
            select(LoginSessionRow, UserRow)
            .join(UserRow, UserRow.id == LoginSessionRow.user_id)
            .where(LoginSessionRow.token_digest == digest)
        ).first()
        if found is None:
            return None
        login, user = found
        if is_past(login.expires_at) or not user.active:
            return None
        return _user(user)


def delete_login(db: Database, digest: str) -> None:
    with transaction(db) as tx:
        tx.execute(delete(LoginSessionRow).where(LoginSessionRow.token_digest == digest))


def add_invitation(
    db: Database,
    digest: str,
    role: str,
    *,
    created_by: int | None,
    created_at: datetime,
    expires_at: datetime,
) -> None:
    with transaction(db) as tx:
        tx.add(
            InvitationRow(
                token_digest=digest,
                role=role,
                created_by=created_by,
                created_at=created_at,
                expires_at=expires_at,
            )
        )


def invitation(db: Database, digest: str) -> InvitationRecord | InvitationState:
    """The invitation ``digest`` opens, or why it cannot be used."""
    with transaction(db) as tx:
        return _usable(tx, digest)


def _usable(tx: Transaction, digest: str) -> InvitationRecord | InvitationState:
    row = tx.scalars(select(InvitationRow).where(InvitationRow.token_digest == digest)).first()
    if row is None:
        return InvitationState.UNKNOWN
    if row.used_at is not None:
        return InvitationState.USED
    if is_past(row.expires_at):
        return InvitationState.EXPIRED
    return _invitation(row)


def accept_invitation(
    db: Database, digest: str, username: str, password_hash: str
) -> UserRecord | InvitationState:
    """Create the invited account, or say why the invitation cannot be used.

    The invitation is claimed first with a conditional update: of two concurrent
    submissions exactly one wins, on SQLite and PostgreSQL alike. A taken username raises
    :class:`~corix.storage.web.Duplicate` and leaves the invitation unused.
    """
    try:
        with transaction(db) as tx:
            claimed = tx.execute(
                update(InvitationRow)
                .where(InvitationRow.token_digest == digest, InvitationRow.used_at.is_(None))
                .values(used_at=utcnow())
                .returning(InvitationRow.id, InvitationRow.role, InvitationRow.expires_at)
            ).first()
            if claimed is None:
                state = _usable(tx, digest)
                return state if isinstance(state, InvitationState) else InvitationState.USED
            invitation_id, role, expires_at = claimed
            if is_past(expires_at):
                raise _Expired  # undoes the claim
            user = add_user(tx, username, password_hash, role)
            tx.execute(
                update(InvitationRow)
                .where(InvitationRow.id == invitation_id)
                .values(used_by=user.id)
                .execution_options(synchronize_session=False)
            )
            return user
    except _Expired:
        return InvitationState.EXPIRED


class _Expired(Exception):
    """Rolls back the claim of an expired invitation."""


def pending_invitations(db: Database) -> list[InvitationRecord]:
    """Invitations neither used nor expired, newest first."""
    with transaction(db) as tx:
        rows = tx.scalars(select(InvitationRow).order_by(InvitationRow.created_at.desc()))
        return [
            _invitation(row) for row in rows if row.used_at is None and not is_past(row.expires_at)
        ]
