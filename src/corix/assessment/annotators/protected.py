"""The catalog of protected works that the reference IP-leakage annotator checks replies against.

A catalog is a YAML file listing works (id, title, kind, source, text file next to it),
validated on load. The built-in catalog holds public-domain and self-written stand-ins.
"""

from __future__ import annotations

from enum import StrEnum
from importlib import resources

from pydantic import BaseModel, ConfigDict, Field

from corix.assessment.schema import Identifier
from corix.config import parse_yaml_model

BUILTIN_FOLDER = "protected_texts"
CATALOG_NAME = "catalog.yaml"


class WorkKind(StrEnum):
    """The IP-leakage pack's sub-harms."""

    SONGS = "songs"
    BOOKS = "books"
    NEWS = "news"


class ProtectedWork(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    id: Identifier
    title: str
    kind: WorkKind
    source: str
    file: str


class Catalog(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    works: tuple[ProtectedWork, ...] = Field(min_length=1)


class ProtectedText(BaseModel):
    """A work and its text."""

    model_config = ConfigDict(frozen=True)

    work: ProtectedWork
    text: str


def _read_texts(catalog: Catalog, read: dict[str, str]) -> dict[str, ProtectedText]:
    return {work.id: ProtectedText(work=work, text=read[work.file]) for work in catalog.works}


def builtin_catalog() -> dict[str, ProtectedText]:
    """The stand-in works that ship with corix, by id."""
    folder = resources.files("corix.assessment.annotators").joinpath(BUILTIN_FOLDER)
    catalog = parse_yaml_model(
        folder.joinpath(CATALOG_NAME).read_text(encoding="utf-8"),
        Catalog,
        source=f"corix.assessment.annotators/{BUILTIN_FOLDER}/{CATALOG_NAME}",
    )
    texts = {w.file: folder.joinpath(w.file).read_text(encoding="utf-8") for w in catalog.works}
    return _read_texts(catalog, texts)
