"""Checks on a pack beyond its schema: templates, references across files, and advice.

:func:`check_pack` raises :class:`~corix.errors.ConfigError` (file, field, line) for anything
that would break a run: a template reading a parameter its parameter set lacks, a selector
naming a fact the packet lacks. :func:`pack_warnings` lists what is legal but likely a mistake.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml
from jinja2 import ChainableUndefined, TemplateError, TemplateSyntaxError
from jinja2.exceptions import SecurityError

from corix.config import compose_yaml
from corix.domain import Level
from corix.errors import ConfigError, closest_name
from corix.scenarios.guardrails import is_prohibited
from corix.scenarios.models import (
    FIELD_TESTING_ITEM_IDS,
    RED_TEAMING_ITEM_IDS,
    Context,
    FactSelector,
    Probe,
    ScenarioPack,
)
from corix.scenarios.personas import PERSONA_VARIABLES
from corix.scenarios.scripts import (
    ScriptedTest,
    expand_script,
    keep_expansion,
    resolve_selector,
    script_expansions,
)
from corix.scenarios.templating import private_attributes, render, template_variables
from corix.scenarios.text import normalize

Location = tuple[str | int, ...]
_SET_OPS = ("in", "contains", "intersects")


class YamlLines:
    """The line each value of a YAML file starts on, by its location (keys and indexes).

    The file is read again only when a line is first asked for: a pack that passes its
    checks never needs one.
    """

    def __init__(self, path: Path) -> None:
        self._path = path
        self._lines: dict[Location, int] | None = None

    def _read(self) -> dict[Location, int]:
        self._lines = {}
        try:
            root = compose_yaml(self._path.read_text(encoding="utf-8"), source=self._path)
        except (OSError, UnicodeDecodeError, ConfigError):
            return self._lines  # read and parsed before; without it errors just lack a line
        if root is not None:
            self._walk(root, ())
        return self._lines

    def _walk(self, node: yaml.Node, loc: Location) -> None:
        assert self._lines is not None
        self._lines[loc] = node.start_mark.line + 1
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                self._walk(value, (*loc, str(key.value)))
        elif isinstance(node, yaml.SequenceNode):
            for index, item in enumerate(node.value):
                self._walk(item, (*loc, index))

    def line(self, loc: Location) -> int | None:
        """The line of ``loc``, or of its nearest enclosing value."""
        lines = self._lines if self._lines is not None else self._read()
        for end in range(len(loc), -1, -1):
            line = lines.get(loc[:end])
            if line is not None:
                return line
        return None


@dataclass(frozen=True)
class _Site:
    """Where a template or value lives, for error messages."""

    path: Path
    field: str
    lines: YamlLines | None  # where the field's line is looked up, once there is an error
    loc: Location = ()
    whole_file: bool = False  # the template is the whole file: its lines are the file's

    def error(self, message: str, template_line: int | None = None) -> ConfigError:
        if self.whole_file and template_line:
            line: int | None = template_line
        else:
            line = self.lines.line(self.loc) if self.lines is not None else None
        return ConfigError(message, path=self.path, field=self.field, line=line)


class _Sites:
    def __init__(self, pack: ScenarioPack) -> None:
        self.path = pack.manifest_path
        self._lines = YamlLines(self.path)

    def at(self, *loc: str | int) -> _Site:
        return _Site(self.path, ".".join(map(str, loc)), self._lines, loc)


def check_pack(pack: ScenarioPack) -> None:
    """Raise ``ConfigError`` for the first problem that would break using ``pack``."""
    sites = _Sites(pack)
    expansion: list[list[ScriptedTest]] = []
    for i, script in enumerate(pack.model_testing.scripts):
        parameter_sets = script.parameters.expand()
        rendered = [
            _check_template(
                turn,
                f"script '{script.id}' turn {j + 1}",
                parameter_sets,
                sites.at("model_testing", "scripts", i, "turns", j),
            )
            for j, turn in enumerate(script.turns)
        ]
        loc = ("model_testing", "scripts", i, "required_facts")
        _check_selector(pack, script.required_facts, parameter_sets, sites, loc)
        try:
            # The turns as the check rendered them: each prompt is rendered once.
            expansion.append(expand_script(pack, script, list(zip(*rendered, strict=True))))
        except ConfigError as exc:
            raise sites.at("model_testing", "scripts", i).error(exc.reason) from None
    _check_personas(pack, sites)
    keep_expansion(pack, expansion)


def _check_personas(pack: ScenarioPack, sites: _Sites) -> None:
    for i, persona in enumerate(pack.personas.templates):
        reserved = PERSONA_VARIABLES[persona.level]
        parameter_sets = persona.parameters.expand()
        for parameters in parameter_sets:
            clash = sorted(reserved & parameters.keys())
            if clash:
                raise sites.at("personas", "templates", i, "parameters").error(
                    f"parameter '{clash[0]}' is reserved for persona templates"
                )
        if persona.file is not None:
            site = _Site(pack.root / persona.file, "", None, whole_file=True)
        else:
            site = sites.at("personas", "templates", i, "text")
        _check_template(
            persona.text, f"persona template '{persona.id}'", parameter_sets, site, reserved
        )
    red_contexts = _persona_contexts(pack, Level.RED_TEAMING) or [{}]
    for k, target in enumerate(pack.personas.targets):
        loc = ("personas", "targets", k, "facts")
        _check_selector(pack, target.facts, red_contexts, sites, loc)
    field_contexts = _persona_contexts(pack, Level.FIELD_TESTING) or [{}]
    for k, task in enumerate(pack.personas.tasks):
        loc = ("personas", "tasks", k, "required_facts")
        _check_selector(pack, task.required_facts, field_contexts, sites, loc)


def _check_template(
    source: str,
    name: str,
    parameter_sets: Sequence[Context],
    site: _Site,
    extra: Iterable[str] = (),
) -> list[str]:
    """Check ``source`` and render it with each parameter set: the texts, in order."""
    try:
        variables = template_variables(source)
    except TemplateSyntaxError as exc:
        raise site.error(f"{name}: template syntax error: {exc.message}", exc.lineno) from None
    private = private_attributes(source)
    if private:
        raise site.error(
            f"{name} reads '{private[0]}': templates may not reach Python internals",
            _first_line_using(source, private[0]),
        )
    texts = []
    for index, parameters in enumerate(parameter_sets):
        defined = parameters.keys() | set(extra)
        missing = sorted(variables - defined)
        if missing:
            variable = missing[0]
            raise site.error(
                f"{name} uses variable '{variable}', which parameter set {index} does not "
                f"define{_did_you_mean(variable, defined)} (defined: "
                f"{', '.join(sorted(defined)) or 'nothing'})",
                _first_line_using(source, variable),
            )
        # Variables corix fills at run time (the persona's goal…) are stand-ins that render as
        # empty text and answer any attribute, so the parameters are what the render tests.
        stand_ins = {variable: ChainableUndefined(name=variable) for variable in extra}
        texts.append(_check_render(source, name, index, {**stand_ins, **parameters}, site))
    return texts


def _check_render(source: str, name: str, index: int, context: Context, site: _Site) -> str:
    """Render once in the sandbox, so what would fail at run time fails validation instead."""
    try:
        return render(source, context)
    except SecurityError as exc:
        raise site.error(f"{name}: refused by the template sandbox: {exc}") from None
    except TemplateError as exc:
        raise site.error(f"{name} fails with parameter set {index}: {exc.message}") from None
    except RecursionError:
        raise site.error(f"{name} calls itself without end (parameter set {index})") from None
    except (ArithmeticError, LookupError, TypeError, ValueError) as exc:  # e.g. range limits
        raise site.error(f"{name} fails with parameter set {index}: {exc}") from None


def _check_selector(
    pack: ScenarioPack,
    selector: FactSelector,
    parameter_sets: Sequence[Context],
    sites: _Sites,
    loc: Location,
) -> None:
    for m, template in enumerate(selector.ids):
        _check_template(template, f"fact id '{template}'", parameter_sets, sites.at(*loc, "ids", m))
    for m, condition in enumerate(selector.where):
        for index, parameters in enumerate(parameter_sets):
            if condition.context is not None and condition.context not in parameters:
                raise sites.at(*loc, "where", m).error(
                    f"condition reads parameter '{condition.context}', which parameter set "
                    f"{index} does not define{_did_you_mean(condition.context, parameters)}"
                )
    for parameters in parameter_sets:
        try:
            resolve_selector(pack.packet, selector, parameters)
        except KeyError as exc:
            known = [statement.id for statement in pack.packet.statements]
            raise sites.at(*loc, "ids").error(
                f"unknown fact '{exc.args[0]}'{_did_you_mean(str(exc.args[0]), known)}"
            ) from None


def _did_you_mean(name: str, known: Iterable[str]) -> str:
    close = closest_name(name, known)
    return f" (did you mean '{close}'?)" if close else ""


def _first_line_using(source: str, variable: str) -> int | None:
    pattern = re.compile(rf"\b{re.escape(variable)}\b")
    for number, line in enumerate(source.splitlines(), start=1):
        if pattern.search(line):
            return number
    return None


def _persona_contexts(pack: ScenarioPack, level: Level) -> list[Context]:
    return [
        parameters
        for persona in pack.personas.templates
        if persona.level is level
        for parameters in persona.parameters.expand()
    ]


# --- warnings --------------------------------------------------------------------------------


def pack_warnings(pack: ScenarioPack) -> list[str]:
    """What is legal in ``pack`` but probably a mistake, one sentence each."""
    return [
        *_questionnaire_warnings(pack),
        *_marker_warnings(pack),
        *_script_warnings(pack),
        *_context_warnings(pack),
        *_unused_parameter_warnings(pack),
        *_persona_warnings(pack),
    ]


def _questionnaire_warnings(pack: ScenarioPack) -> list[str]:
    warnings = []
    for level, expected, items in (
        ("field_testing", FIELD_TESTING_ITEM_IDS, pack.questionnaires.field_testing),
        ("red_teaming", RED_TEAMING_ITEM_IDS, pack.questionnaires.red_teaming),
    ):
        present = {item.id for item in items}
        missing = [item_id for item_id in expected if item_id not in present]
        if missing:
            warnings.append(
                f"the {level} questionnaire lacks the shared items {', '.join(missing)}; "
                "reports compare packs on them"
            )
    return warnings


def _marker_warnings(pack: ScenarioPack) -> list[str]:
    warnings = []
    owners: dict[str, list[str]] = {}
    for statement in pack.packet.statements:
        text = f" {normalize(statement.text)} "
        markers = [normalize(marker) for marker in statement.markers]
        if not any(f" {marker} " in text for marker in markers):
            warnings.append(
                f"'{statement.id}': its text contains none of its markers, so quoting it "
                "would go unnoticed"
            )
        for marker in dict.fromkeys(markers):
            owners.setdefault(marker, []).append(statement.id)
    for marker, ids in owners.items():
        if len(ids) > 1:
            warnings.append(f"marker '{marker}' is shared by {', '.join(ids)}: ambiguous evidence")
    return warnings


def _script_warnings(pack: ScenarioPack) -> list[str]:
    warnings = []
    for script, tests in zip(pack.model_testing.scripts, script_expansions(pack), strict=True):
        if script.probe is not Probe.CAPABILITY:
            continue
        for test in tests:
            if not test.required_facts:
                warnings.append(
                    f"capability script '{script.id}' requires no facts for parameter set "
                    f"{test.index}, so withholding cannot be detected"
                )
    return warnings


def _all_contexts(pack: ScenarioPack) -> list[tuple[str, Context]]:
    contexts = [
        (f"script '{script.id}'", parameters)
        for script in pack.model_testing.scripts
        for parameters in script.parameters.expand()
    ]
    contexts.extend(
        (f"persona '{persona.id}'", parameters)
        for persona in pack.personas.templates
        for parameters in persona.parameters.expand()
    )
    return contexts


def _context_warnings(pack: ScenarioPack) -> list[str]:
    warnings: list[str] = []
    contexts = _all_contexts(pack)
    defined = {name for _, parameters in contexts for name in parameters}
    vocabulary: dict[str, set[str]] = {}
    for rule in pack.packet.rules:
        for condition in rule.prohibited_when:
            if condition.context is None:
                continue
            if condition.context not in defined:
                warnings.append(
                    f"rule '{rule.id}' reads parameter '{condition.context}', which no script "
                    "or persona defines, so it never applies"
                )
            if condition.op in _SET_OPS:
                values = vocabulary.setdefault(condition.context, set())
                for fact in pack.packet.facts:
                    values.update(_words(fact.tags.get(condition.tag)))
    reported: set[tuple[str, str]] = set()
    for owner, parameters in contexts:
        for name, known in vocabulary.items():
            for value in _words(parameters.get(name)):
                if value not in known and (owner, value) not in reported:
                    reported.add((owner, value))
                    warnings.append(
                        f"{owner}: '{name}' value '{value}' matches no fact tag"
                        f"{_did_you_mean(value, known)}"
                    )
    return warnings


def _selector_reads(selector: FactSelector) -> set[str]:
    variables = {v for template in selector.ids for v in template_variables(template)}
    return variables | {c.context for c in selector.where if c.context is not None}


def _unused_parameter_warnings(pack: ScenarioPack) -> list[str]:
    """Parameters that neither a template, a selector nor a guardrail rule reads."""
    rules_read = {c.context for r in pack.packet.rules for c in r.prohibited_when if c.context}
    warnings: list[str] = []
    for script in pack.model_testing.scripts:
        read = rules_read | _selector_reads(script.required_facts)
        read.update(v for turn in script.turns for v in template_variables(turn))
        unused = {k for p in script.parameters.expand() for k in p} - read
        warnings.extend(f"script '{script.id}' never uses parameter '{k}'" for k in sorted(unused))
    goals = {
        Level.RED_TEAMING: [t.facts for t in pack.personas.targets],
        Level.FIELD_TESTING: [t.required_facts for t in pack.personas.tasks],
    }
    for persona in pack.personas.templates:
        read = rules_read | template_variables(persona.text)
        read.update(v for selector in goals[persona.level] for v in _selector_reads(selector))
        unused = {k for p in persona.parameters.expand() for k in p} - read
        warnings.extend(
            f"persona '{persona.id}' never uses parameter '{k}'" for k in sorted(unused)
        )
    return warnings


def _words(value: object) -> set[str]:
    if value is None:
        return set()
    items = value if isinstance(value, list) else [value]
    return {str(item).strip().casefold() for item in items}


def _persona_warnings(pack: ScenarioPack) -> list[str]:
    warnings = []
    for level, goals in (
        (Level.RED_TEAMING, pack.personas.targets),
        (Level.FIELD_TESTING, pack.personas.tasks),
    ):
        if not _persona_contexts(pack, level):
            warnings.append(f"no {level.value} persona templates: simulated users cannot play it")
        if not goals:
            kind = "red-team targets" if level is Level.RED_TEAMING else "field tasks"
            warnings.append(f"no {kind} declared")
    red_contexts = _persona_contexts(pack, Level.RED_TEAMING)
    for target in pack.personas.targets:
        reachable = any(
            is_prohibited(pack.packet, pack.packet.statement(fact_id), context)
            for context in red_contexts
            for fact_id in resolve_selector(pack.packet, target.facts, context)
        )
        if red_contexts and not reachable:
            warnings.append(
                f"target '{target.id}' selects nothing prohibited for any red-teaming persona"
            )
    return warnings
