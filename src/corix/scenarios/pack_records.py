"""A scenario pack as a stored fact: what a run used, named by a hash of its content.

A run stores the record of every pack it used; annotation, reports and resumes load the
pack from that record, never by name, so a pack given by path, or changed on disk since,
is read back exactly as the run used it.
"""

from __future__ import annotations

import hashlib
import json

from pydantic import BaseModel, ConfigDict

from corix.domain import JsonObject
from corix.scenarios.models import ScenarioPack

__all__ = ["PackRecord", "pack_record"]


class PackRecord(BaseModel):
    """A pack's identity (name, version, content hash), where it was read, and its content."""

    model_config = ConfigDict(frozen=True)

    name: str
    version: str
    source: str
    """The ``pack.yaml`` the pack was loaded from."""
    content_hash: str
    """SHA-256 of the canonical JSON of ``definition``."""
    definition: JsonObject
    """The loaded pack as data: test packet and persona texts inline, no file paths."""

    def pack(self) -> ScenarioPack:
        """The pack again, as it was when the record was made."""
        return ScenarioPack.model_validate({**self.definition, "manifest_path": self.source})


def pack_record(pack: ScenarioPack) -> PackRecord:
    """The record of a loaded pack."""
    definition = _definition(pack)
    canonical = json.dumps(definition, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return PackRecord(
        name=pack.name,
        version=pack.version,
        source=str(pack.manifest_path),
        content_hash=hashlib.sha256(canonical.encode()).hexdigest(),
        definition=definition,
    )


def _definition(pack: ScenarioPack) -> JsonObject:
    # A loaded template holds its file's text; the record keeps the text alone, so that
    # reading it back needs no file (and a template has exactly one source).
    templates = [t.model_copy(update={"file": None}) for t in pack.personas.templates]
    personas = pack.personas.model_copy(update={"templates": templates})
    inline = pack.model_copy(update={"personas": personas})
    return inline.model_dump(mode="json", exclude={"manifest_path"})
