"""Names for JSON that is free-form on purpose.

Everything that crosses a layer is a typed model; these aliases mark the few payloads whose
shape belongs to someone else (a wire format, a JSON Schema, a column stored as given), so a
reader sees at the signature that no structure is promised. ``tests/test_layout.py`` pins how
often they and a bare ``dict[str, Any]`` appear.
"""

from typing import Any, TypeAlias

JsonObject: TypeAlias = dict[str, Any]
"""A JSON object whose keys are not corix's to fix: a request or reply on the wire, stored
provenance or metadata, an imported log's record."""

JsonSchema: TypeAlias = dict[str, Any]
"""A JSON Schema document (for structured replies, the report's schema)."""
