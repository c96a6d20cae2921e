"""Accounts: users, sign-in sessions and invitation links."""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

import anyio

from corix.storage import Database
from corix.storage.web import Duplicate, transaction
from corix.storage.web import accounts as store
from corix.storage.web.accounts import InvitationState, UserRecord
from corix.web.roles import Role
from corix.web.security import HashingPool, Passwords, new_token, token_digest
from corix.web.services.clock import utcnow
from corix.web.services.service_errors import Gone, InputError, NotFound

USERNAME_RULE = re.compile(r"^[a-z0-9][a-z0-9._-]{2,63}$")
MAX_PASSWORD_CHARS = 256  # hashing megabytes of "password" would be a cheap denial of service
EXPIRED = "this invitation has expired; ask your evaluation team for a new one"


@dataclass(frozen=True)
class SignedInUser:
    id: int
    username: str
    role: Role

    @classmethod
    def of(cls, record: UserRecord) -> SignedInUser:
        return cls(id=record.id, username=record.username, role=Role(record.role))


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


MAX_USERNAME_LIST = 200_000
"""Characters of a pasted list of usernames (about 10,000 names)."""


def chosen_people(
    users: Iterable[UserSummary],
    roles: Collection[Role],
    ids: Iterable[int] | None,
    *,
    everyone: bool,
    usernames: str,
) -> list[int]:
    """The users a form chose: ticked ids, every active user in ``roles``, or a pasted list
    of usernames (separated by spaces, commas or new lines), all together and each once.

    A series of thousands is chosen with one field, not a field per person. Unknown names
    and names of another role are refused, listed."""
    eligible = {user.username: user.id for user in users if user.active and user.role in roles}
    chosen = set(eligible.values()) if everyone else set()
    chosen.update(ids or ())  # ticked ids are checked where they are assigned
    unknown = []
    for name in re.split(r"[\s,;]+", usernames.strip().lower()) if usernames.strip() else []:
        if name in eligible:
            chosen.add(eligible[name])
        else:
            unknown.append(name)
    if unknown:
        shown = ", ".join(unknown[:5]) + (
            f" and {len(unknown) - 5} more" if len(unknown) > 5 else ""
        )
        raise InputError(
            f"not an active account of this kind: {shown}", {"usernames": "unknown names"}
        )
    return sorted(chosen)


class Accounts:
    """Creates users and checks who is signed in. Stores only digests of secret tokens."""

    def __init__(
        self,
        db: Database,
        passwords: Passwords,
        hashing: HashingPool,
        *,
        session_ttl: timedelta,
        invitation_ttl: timedelta,
        min_password_chars: int,
    ) -> None:
        self._db = db
        self._passwords = passwords
        self._hashing = hashing
        self._session_ttl = session_ttl
        self._invitation_ttl = invitation_ttl
        self._min_password_chars = min_password_chars
        self.clock: Callable[[], datetime] = utcnow
        """The clock sign-ins and invitations are stamped with (tests move it back)."""

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
            with transaction(self._db) as tx:
                return SignedInUser.of(store.add_user(tx, name, password_hash, role.value))
        except Duplicate:
            raise _taken(name) from None

    async def authenticate(self, username: str, password: str) -> SignedInUser | None:
        """The user if the password is right. Hashing runs in the hashing pool (raising
        :class:`~corix.web.security.HashingBusy` when its queue is full); the database is
        read on the request threads."""
        found = await anyio.to_thread.run_sync(self.sign_in_record, username)
        return await self.verify(found, password)

    def sign_in_record(self, username: str) -> tuple[UserRecord, str] | None:
        """The account a sign-in names and its stored hash (blocking: a request thread)."""
        return store.user_for_sign_in(self._db, username.strip().lower())

    async def verify(
        self, found: tuple[UserRecord, str] | None, password: str
    ) -> SignedInUser | None:
        """The user if ``password`` matches ``found`` (from :meth:`sign_in_record`); an
        unknown or inactive account takes as long as a known one."""
        if found is None or not found[0].active or len(password) > MAX_PASSWORD_CHARS:
            await self._hashing.run(self._passwords.burn, password[:MAX_PASSWORD_CHARS])
            return None
        user, password_hash = found
        check = await self._hashing.run(self._passwords.check, password_hash, password)
        if not check.ok:
            return None
        if check.new_hash is not None:
            await anyio.to_thread.run_sync(
                store.set_password_hash, self._db, user.id, check.new_hash
            )
        return SignedInUser.of(user)

    def users(self) -> list[UserSummary]:
        return [
            UserSummary(r.id, r.username, Role(r.role), r.active, r.created_at)
            for r in store.users(self._db)
        ]

    def set_active(self, user_id: int, active: bool) -> None:
        if not store.set_active(self._db, user_id, active):
            raise NotFound(f"no user {user_id}")

    # -- sign-in sessions ----------------------------------------------------------------
    def open_session(self, user_id: int) -> str:
        token = new_token()
        now = self.clock()
        store.add_login(self._db, user_id, token_digest(token), now, now + self._session_ttl)
        return token

    def user_for_session(self, token: str) -> SignedInUser | None:
        user = store.user_for_login(self._db, token_digest(token))
        return None if user is None else SignedInUser.of(user)

    def close_session(self, token: str) -> None:
        store.delete_login(self._db, token_digest(token))

    # -- invitations ---------------------------------------------------------------------
    def invite(self, role: Role, *, created_by: int | None) -> str:
        """Return the secret token of a new single-use invitation; only its digest is kept."""
        token = new_token()
        now = self.clock()
        store.add_invitation(
            self._db,
            token_digest(token),
            role.value,
            created_by=created_by,
            created_at=now,
            expires_at=now + self._invitation_ttl,
        )
        return token

    def invitation_role(self, token: str) -> Role:
        """The role an invitation grants; raises if it is unknown, used or expired."""
        found = store.invitation(self._db, token_digest(token))
        if isinstance(found, InvitationState):
            raise _unusable(found)
        return Role(found.role)

    async def accept_invitation(self, token: str, username: str, password: str) -> SignedInUser:
        """Create the invited account. A second submission of the same link is refused."""
        name = self.check_new_credentials(username, password)
        password_hash = await self._hashing.run(self._passwords.hash, password)
        try:
            found = await anyio.to_thread.run_sync(
                store.accept_invitation, self._db, token_digest(token), name, password_hash
            )
        except Duplicate:
            raise _taken(name) from None
        if isinstance(found, InvitationState):
            raise _unusable(found)
        return SignedInUser.of(found)

    def close(self) -> None:
        self._hashing.close()

    def pending_invitations(self) -> list[PendingInvitation]:
        return [
            PendingInvitation(r.id, Role(r.role), r.expires_at)
            for r in store.pending_invitations(self._db)
        ]


def _taken(name: str) -> InputError:
    return InputError(f"the username '{name}' is taken", {"username": "is taken"})


def _unusable(state: InvitationState) -> NotFound | Gone:
    if state is InvitationState.UNKNOWN:
        return NotFound("this invitation link is not valid; ask for a new one")
    if state is InvitationState.USED:
        return Gone("this invitation has already been used; sign in instead")
    return Gone(EXPIRED)
