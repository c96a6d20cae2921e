"""Errors the services raise; the web layer turns each into a page or JSON with its status."""

from __future__ import annotations

from collections.abc import Mapping

from corix.errors import CorixError


class ServiceError(CorixError):
    """A request the service refuses, with a message fit to show to the person who made it."""

    status_code = 400


class NotFound(ServiceError):
    status_code = 404


class Forbidden(ServiceError):
    """The item exists but belongs to someone else."""

    status_code = 403


class Conflict(ServiceError):
    """The request no longer fits the item's state, e.g. a form submitted twice."""

    status_code = 409


class Gone(ServiceError):
    """The item existed but is no longer usable, e.g. an expired invitation."""

    status_code = 410


class InputError(ServiceError):
    """Submitted values that do not fit; ``problems`` maps a field to what is wrong with it."""

    status_code = 422

    def __init__(self, message: str, problems: Mapping[str, str] | None = None) -> None:
        super().__init__(message)
        self.problems = dict(problems or {})
