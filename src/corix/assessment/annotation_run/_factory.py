"""Building a registered annotator from its name and what it needs to judge."""

from __future__ import annotations

from collections.abc import Mapping

from corix.assessment.annotators import ANNOTATORS, Annotator, AnnotatorSetup
from corix.assessment.harms import HarmPack, builtin_harm_packs
from corix.assessment.schema import AnnotationSchema, load_builtin_schema
from corix.llm import LLMClient


def build_annotator(
    name: str,
    *,
    client: LLMClient | None = None,
    schema: AnnotationSchema | None = None,
    packs: Mapping[str, HarmPack] | None = None,
    max_reasks: int = 2,
    temperature: float | None = None,
) -> Annotator:
    """The registered annotator ``name`` (an unknown name gets a "did you mean")."""
    factory = ANNOTATORS.get(name)
    setup = AnnotatorSetup(
        schema=schema or load_builtin_schema(),
        harm_packs=packs if packs is not None else builtin_harm_packs(),
        client=client,
        max_reasks=max_reasks,
        temperature=temperature,
    )
    return factory(setup)
