"""Accounts: users, sign-in sessions and invitation links."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import delete, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from corix.storage import Database
from corix.storage.orm_web import InvitationRow, LoginSessionRow, UserRow
from corix.web.roles import Role
from corix.web.security import Passwords, new_token, token_digest
from corix.web.services.clock import is_past, utcnow
from corix.web.services.errors import Gone, InputError, NotFound

USERNAME_RULE = re.compile(r"^[a-z0-9][a-z0-9._-]{2,63}$")
MAX_PASSWORD_CHARS = 256  # hashing megabytes of "password" would be a cheap denial of service
EXPIRED = "this invitation has expired; ask your evaluation team for a new one"


@dataclass(frozen=True)
class SignedInUser:
    id: int
    username: str
    role: Role

    @classmethod
    def of(cls, row: UserRow) -> SignedInUser:
        return cls(id=row.id, username=row.username, role=Role(row.role))


@dataclass(frozen=True)
class UserSummary:
    id: int
    username: str
    role: Role
    active: bool
    created_at: datetime


@dataclass(frozen=True)
class PendingInvitation:
    id: int
    role: Role
    expires_at: datetime


def parse_role(value: str) -> Role:
    """The role a form names; there is no default, so a missing role is refused."""
    if not value:
        raise InputError("choose a role", {"role": "choose a role"})
    try:
        return Role(value)
    except ValueError:
        known = ", ".join(role.value for role in Role)
        raise InputError(f"unknown role '{value}'; roles: {known}", {"role": "unknown"}) from None


class Accounts:
    """Creates users and checks who is signed in. Stores only digests of secret tokens."""

    def __init__(
        self,
        db: Database,
        passwords: Passwords,
        *,
        session_ttl: timedelta,
        invitation_ttl: timedelta,
        min_password_chars: int,
    ) -> None:
        self._db = db
        self._passwords = passwords
        self._session_ttl = session_ttl
        self._invitation_ttl = invitation_ttl
        self._min_password_chars = min_password_chars

    # -- users ---------------------------------------------------------------------------
    def check_new_credentials(self, username: str, password: str) -> str:
        """Return the username in stored form, or raise listing what is wrong with both."""
        name = username.strip().lower()
        problems: dict[str, str] = {}
        if not USERNAME_RULE.fullmatch(name):
            problems["username"] = (
                "3–64 characters: lower-case letters, digits, dots, dashes or underscores, "
                "starting with a letter or digit"
            )
        if len(password) < self._min_password_chars:
            problems["password"] = f"at least {self._min_password_chars} characters"
        elif len(password) > MAX_PASSWORD_CHARS:
            problems["password"] = f"at most {MAX_PASSWORD_CHARS} characters"
        if problems:
            raise InputError("please fix the highlighted fields", problems)
        return name

    def create_user(self, username: str, password: str, role: Role) -> SignedInUser:
        name = self.check_new_credentials(username, password)
        password_hash = self._passwords.hash(password)
        try:
            with self._db.session() as s:
                return self._insert_user(s, name, password_hash, role)
        except IntegrityError:
            raise InputError(f"the username '{name}' is taken", {"username": "is taken"}) from None

    @staticmethod
    def _insert_user(s: Session, name: str, password_hash: str, role: Role) -> SignedInUser:
        row = UserRow(username=name, password_hash=password_hash, role=role.value, active=True)
        s.add(row)
        s.flush()
        return SignedInUser.of(row)

    def authenticate(self, username: str, password: str) -> SignedInUser | None:
        name = username.strip().lower()
        with self._db.session() as s:
            row = s.scalars(select(UserRow).where(UserRow.username == name)).first()
            if row is None or not row.active or len(password) > MAX_PASSWORD_CHARS:
                self._passwords.burn(password[:MAX_PASSWORD_CHARS])
                return None
            check = self._passwords.check(row.password_hash, password)
            if not check.ok:
                return None
            if check.new_hash is not None:
                row.password_hash = check.new_hash
            return SignedInUser.of(row)

    def users(self) -> list[UserSummary]:
        with self._db.session() as s:
            rows = s.scalars(select(UserRow).order_by(UserRow.role, UserRow.username))
            return [
                UserSummary(r.id, r.username, Role(r.role), r.active, r.created_at) for r in rows
            ]

    def set_active(self, user_id: int, active: bool) -> None:
        with self._db.session() as s:
            row = s.get(UserRow, user_id)
            if row is None:
                raise NotFound(f"no user {user_id}")
            row.active = active
            if not active:
                s.execute(delete(LoginSessionRow).where(LoginSessionRow.user_id == user_id))

    # -- sign-in sessions ----------------------------------------------------------------
    def open_session(self, user_id: int) -> str:
        token = new_token()
        now = utcnow()
        with self._db.session() as s:
            expired = [
                row.token_digest
                for row in s.scalars(
                    select(LoginSessionRow).where(LoginSessionRow.user_id == user_id)
                )
                if is_past(row.expires_at)
            ]
            if expired:
                s.execute(delete(LoginSessionRow).where(LoginSessionRow.token_digest.in_(expired)))
            s.add(
                LoginSessionRow(
                    token_digest=token_digest(token),
                    user_id=user_id,
                    created_at=now,
                    expires_at=now + self._session_ttl,
                )
            )
        return token

    def user_for_session(self, token: str) -> SignedInUser | None:
        with self._db.session() as s:
            found = s.execute(
                select(LoginSessionRow, UserRow)
                .join(UserRow, UserRow.id == LoginSessionRow.user_id)
                .where(LoginSessionRow.token_digest == token_digest(token))
            ).first()
            if found is None:
                return None
            login, user = found
            if is_past(login.expires_at) or not user.active:
                return None
            return SignedInUser.of(user)

    def close_session(self, token: str) -> None:
        with self._db.session() as s:
            s.execute(
                delete(LoginSessionRow).where(LoginSessionRow.token_digest == token_digest(token))
            )

    # -- invitations ---------------------------------------------------------------------
    def invite(self, role: Role, *, created_by: int | None) -> str:
        """Return the secret token of a new single-use invitation; only its digest is kept."""
        token = new_token()
        now = utcnow()
        with self._db.session() as s:
            s.add(
                InvitationRow(
                    token_digest=token_digest(token),
                    role=role.value,
                    created_by=created_by,
                    created_at=now,
                    expires_at=now + self._invitation_ttl,
                )
            )
        return token

    def invitation_role(self, token: str) -> Role:
        """The role an invitation grants; raises if it is unknown, used or expired."""
        with self._db.session() as s:
            return Role(self._usable_invitation(s, token).role)

    def accept_invitation(self, token: str, username: str, password: str) -> SignedInUser:
        """Create the invited account. A second submission of the same link is refused."""
        name = self.check_new_credentials(username, password)
        password_hash = self._passwords.hash(password)
        try:
            with self._db.session() as s:
                # Claim first, with a conditional update: of two concurrent submissions
                # exactly one wins, on SQLite and PostgreSQL alike.
                claimed = s.execute(
                    update(InvitationRow)
                    .where(
                        InvitationRow.token_digest == token_digest(token),
                        InvitationRow.used_at.is_(None),
                    )
                    .values(used_at=utcnow())
                    .returning(InvitationRow.id, InvitationRow.role, InvitationRow.expires_at)
                ).first()
                if claimed is None:
                    self._usable_invitation(s, token)  # raises, saying why
                    raise Gone("this invitation has already been used")
                invitation_id, role, expires_at = claimed
                if is_past(expires_at):
                    raise Gone(EXPIRED)
                user = self._insert_user(s, name, password_hash, Role(role))
                s.execute(
                    update(InvitationRow)
                    .where(InvitationRow.id == invitation_id)
                    .values(used_by=user.id)
                    .execution_options(synchronize_session=False)
                )
                return user
        except IntegrityError:
            raise InputError(f"the username '{name}' is taken", {"username": "is taken"}) from None

    def pending_invitations(self) -> list[PendingInvitation]:
        with self._db.session() as s:
            rows = s.scalars(select(InvitationRow).order_by(InvitationRow.created_at.desc()))
            return [
                PendingInvitation(r.id, Role(r.role), r.expires_at)
                for r in rows
                if r.used_at is None and not is_past(r.expires_at)
            ]

    @staticmethod
    def _usable_invitation(s: Session, token: str) -> InvitationRow:
        row = s.scalars(
            select(InvitationRow).where(InvitationRow.token_digest == token_digest(token))
        ).first()
        if row is None:
            raise NotFound("this invitation link is not valid; ask for a new one")
        if row.used_at is not None:
            raise Gone("this invitation has already been used; sign in instead")
        if is_past(row.expires_at):
            raise Gone(EXPIRED)
        return row
