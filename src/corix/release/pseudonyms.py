"""Stable salted pseudonyms: the same person, application or finding always gets the same
stand-in under one salt, and nobody without the salt can tell whom it stands for.

A keyed hash (HMAC-SHA256) rather than a plain one: usernames and application names are
few and guessable, so an unkeyed hash of them would be reversed by trying them all.
Keep the salt private and reuse it across the releases of a series to keep pseudonyms
stable between them.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from pathlib import Path

from corix.config import write_atomically
from corix.errors import ConfigError

__all__ = ["HUMAN_PREFIX", "Pseudonymizer", "new_salt", "read_salt"]

HUMAN_PREFIX = "human:"
"""A person's annotation passes name them ``human:<username>``."""

_MIN_SALT = 16


def new_salt(path: Path) -> bytes:
    """Write a fresh random salt (32 bytes, hex) to ``path``, readable by its owner only."""
    salt = secrets.token_hex(32)
    write_atomically(path, salt + "\n", encoding="ascii")
    path.chmod(0o600)
    return salt.encode()


def read_salt(path: Path) -> bytes:
    try:
        salt = path.read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise ConfigError(f"cannot read the salt: {exc.strerror}", path=path) from None
    if len(salt) < _MIN_SALT:
        raise ConfigError(f"a salt needs at least {_MIN_SALT} characters", path=path)
    return salt.encode()


class Pseudonymizer:
    """Stand-ins for people, applications and findings under one salt."""

    def __init__(self, salt: bytes) -> None:
        self._salt = salt

    @property
    def fingerprint(self) -> str:
        """Names the salt in a manifest without revealing it."""
        return hashlib.sha256(b"fingerprint\0" + self._salt).hexdigest()[:12]

    def _digest(self, kind: str, value: str, length: int) -> str:
        message = f"{kind}\0{' '.join(value.split()).lower()}".encode(errors="surrogatepass")
        return hmac.new(self._salt, message, hashlib.sha256).hexdigest()[:length]

    def person(self, username: str) -> str:
        """One pseudonym per person, whether they tested, annotated or both."""
        return f"person-{self._digest('person', username, 10)}"

    def annotator(self, annotator: str) -> str:
        """A person's annotator name (``human:<username>``) with the username replaced."""
        return HUMAN_PREFIX + self.person(annotator.removeprefix(HUMAN_PREFIX))

    def application(self, name: str) -> str:
        return f"application-{self._digest('application', name, 8)}"

    def finding(self, entity: str, text: str) -> str:
        """The same text of the same kind becomes the same placeholder everywhere."""
        return f"[{entity}-{self._digest(entity, text, 8)}]"
