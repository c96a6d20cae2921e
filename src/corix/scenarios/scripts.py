"""Model-testing scripts expanded into concrete scripted dialogues.

Each script's turn templates are rendered once per parameter set and loaded pack: checking
the pack renders them, and its expansion is kept with the pack while it lives (a pack is
frozen), so planning a run and counting its work reuse the same tests. A test's ``key`` is
``pack/script/index`` where ``index`` is the parameter set's position in the script's full
expansion, so the same test keeps the same key across runs and a resumed run maps its work
items back onto the same tests.
"""

from __future__ import annotations

import random
import weakref
from collections.abc import Sequence

from jinja2 import TemplateError
from pydantic import BaseModel, ConfigDict

from corix.domain import JsonObject
from corix.errors import ConfigError
from corix.scenarios.guardrails import select_statements
from corix.scenarios.models import (
    Context,
    FactSelector,
    ModelTestScript,
    Probe,
    ScenarioPack,
    TestPacket,
)
from corix.scenarios.templating import render


class ScriptedTest(BaseModel):
    """One scripted dialogue: the user turns to send and what a good answer must contain."""

    model_config = ConfigDict(frozen=True)

    key: str
    pack: str
    script: str
    index: int
    turns: list[str]
    parameters: JsonObject
    probe: Probe
    required_facts: list[str]
    template: str
    template_version: str


def resolve_selector(packet: TestPacket, selector: FactSelector, parameters: Context) -> list[str]:
    """The statement ids ``selector`` picks with these parameters (ids rendered as Jinja)."""
    ids = [render(template, parameters) for template in selector.ids]
    return select_statements(packet, ids, selector.where, parameters)


def expand_script(
    pack: ScenarioPack, script: ModelTestScript, rendered: Sequence[Sequence[str]] | None = None
) -> list[ScriptedTest]:
    """Every parameter set of ``script``, in order; template problems raise ``ConfigError``.

    ``rendered[index]`` holds the turns already rendered for parameter set ``index`` (as
    checking the pack does); without it the turns are rendered here.
    """
    tests = []
    for index, parameters in enumerate(script.parameters.expand()):
        try:
            if rendered is None:
                turns = [render(turn, parameters) for turn in script.turns]
            else:
                turns = list(rendered[index])
            required = resolve_selector(pack.packet, script.required_facts, parameters)
        except (TemplateError, KeyError) as exc:
            raise ConfigError(
                f"script '{script.id}', parameter set {index}: {_describe(exc)}",
                path=pack.manifest_path,
            ) from None
        tests.append(
            ScriptedTest(
                key=f"{pack.name}/{script.id}/{index}",
                pack=pack.name,
                script=script.id,
                index=index,
                turns=turns,
                parameters=parameters,
                probe=script.probe,
                required_facts=required,
                template=script.id,
                template_version=script.version,
            )
        )
    return tests


# Each loaded pack's expansion (one list of tests per script), by the pack's id while it lives.
_EXPANSIONS: dict[int, list[list[ScriptedTest]]] = {}


def keep_expansion(pack: ScenarioPack, expansion: list[list[ScriptedTest]]) -> None:
    """Keep ``expansion`` (every script's tests, in script order) with ``pack``."""
    if id(pack) not in _EXPANSIONS:
        weakref.finalize(pack, _EXPANSIONS.pop, id(pack), None)
    _EXPANSIONS[id(pack)] = expansion


def script_expansions(pack: ScenarioPack) -> list[list[ScriptedTest]]:
    """Every script's tests, in script order, rendered once per pack object."""
    expansion = _EXPANSIONS.get(id(pack))
    if expansion is None:
        expansion = [expand_script(pack, script) for script in pack.model_testing.scripts]
        keep_expansion(pack, expansion)
    return expansion


def _describe(exc: Exception) -> str:
    if isinstance(exc, KeyError):
        return f"unknown fact '{exc.args[0]}'"
    return str(exc)


def expand_model_tests(pack: ScenarioPack, seed: int = 0) -> list[ScriptedTest]:
    """All scripted tests of ``pack`` in script order.

    A script with ``sample: n`` contributes ``n`` of its parameter sets, drawn with ``seed``
    (the same seed always draws the same sets, and keys do not depend on the draw).
    """
    tests: list[ScriptedTest] = []
    for script, expanded in zip(pack.model_testing.scripts, script_expansions(pack), strict=True):
        if script.sample is not None and script.sample < len(expanded):
            rng = random.Random(f"{seed}/{pack.name}/{script.id}")
            chosen = sorted(rng.sample(range(len(expanded)), script.sample))
            expanded = [expanded[i] for i in chosen]
        tests.extend(expanded)
    return tests
