"""Finding and loading scenario packs: built-in ones by name, anyone's by path."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from corix.config import load_yaml_model, read_config_text
from corix.errors import ConfigError
from corix.registry import Registry
from corix.scenarios.models import PackManifest, PersonaTemplate, ScenarioPack, TestPacket
from corix.scenarios.validation import YamlLines, check_pack, pack_warnings

MANIFEST_NAME = "pack.yaml"

# Pack folders by name: the built-in ones (corix.scenarios.plugin) and any plugin's.
# corix.extension_points lists every registry.
PACK_FOLDERS: Registry[Path] = Registry("scenario pack", builtins="corix.scenarios.plugin")


def builtin_pack_dir() -> Path:
    """The folder holding the packs that ship with corix."""
    return Path(__file__).resolve().parents[1] / "packs"


def list_builtin_packs() -> list[str]:
    """Names of the built-in packs, sorted."""
    return sorted(
        folder.name for folder in builtin_pack_dir().iterdir() if (folder / MANIFEST_NAME).is_file()
    )


def load_pack(path: Path | str) -> ScenarioPack:
    """Load and check the pack at ``path`` (its folder or its ``pack.yaml``).

    Raises ``ConfigError`` naming the file, field and line of the first problem.
    """
    manifest_path = Path(path)
    if manifest_path.is_dir():
        manifest_path = manifest_path / MANIFEST_NAME
    if not manifest_path.is_file():
        raise ConfigError(f"no scenario pack here (expected {MANIFEST_NAME})", path=path)
    manifest = load_yaml_model(manifest_path, PackManifest)
    root = manifest_path.parent
    packet = load_yaml_model(root / manifest.test_packet, TestPacket)
    templates = [
        _with_text(persona, root, manifest_path, i)
        for i, persona in enumerate(manifest.personas.templates)
    ]
    fields = dict(manifest)
    fields["personas"] = manifest.personas.model_copy(update={"templates": templates})
    pack = ScenarioPack(**fields, manifest_path=manifest_path, packet=packet)
    check_pack(pack)
    return pack


def _with_text(
    persona: PersonaTemplate, root: Path, manifest_path: Path, index: int
) -> PersonaTemplate:
    """Read a file-based persona template, so the loaded pack holds its text."""
    if persona.file is None:
        return persona
    try:
        text = read_config_text(root / persona.file)
    except ConfigError as exc:
        loc = ("personas", "templates", index, "file")
        raise ConfigError(
            f"cannot read template file '{persona.file}': "
            f"{exc.reason.removeprefix('cannot read: ')}",
            path=manifest_path,
            field=".".join(map(str, loc)),
            line=YamlLines(manifest_path).line(loc),
        ) from None
    return persona.model_copy(update={"text": text})


@cache
def _load_registered(folder: Path) -> ScenarioPack:
    # Registered packs are package data that does not change while corix runs.
    return load_pack(folder)


def resolve_pack(name_or_path: str | Path) -> ScenarioPack:
    """A registered pack by name (``tv_spoilers``), or the pack at a path.

    An unknown name raises ``UnknownNameError`` with a "did you mean".
    """
    text = str(name_or_path)
    if isinstance(name_or_path, str) and text in PACK_FOLDERS:
        return _load_registered(PACK_FOLDERS.get(text))
    if isinstance(name_or_path, Path) or "/" in text or "\\" in text or Path(text).exists():
        return load_pack(name_or_path)
    return _load_registered(PACK_FOLDERS.get(text))


def validate_pack(path: Path | str) -> list[str]:
    """Load the pack at ``path`` (raising ``ConfigError`` if broken) and list its warnings."""
    return pack_warnings(load_pack(path))
