"""The ARIA dialog API base class, provided to submissions that do not ship their own.

Written here from the published method list of the ARIA dialog API.
"""

from __future__ import annotations

from corix.domain import JsonObject


class AriaDialogAPI:
    """Base class that ARIA submissions subclass as ``Team_ARIADialogAPI``."""

    def OpenConnection(self, auth: JsonObject | None = None) -> bool:
        return True

    def CloseConnection(self) -> bool:
        return True

    @staticmethod
    def GetVersion() -> str:
        return "unknown"

    def StartSession(self) -> bool:
        return True

    def GetResponse(self, text: str) -> JsonObject:
        raise NotImplementedError("a submission must implement GetResponse")
