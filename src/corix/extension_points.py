"""Every extension point of corix: what it is, what a component must be, and its registry.

corix is extended by adding a component by name to a typed registry
(:class:`corix.registry.Registry`). Each registry lives in the package that reads it; this
module lists them all, so a reader finds every place a component can plug in, the type it
must have, and where corix's own come from.

The first time a registry is read it is filled: with corix's own first, by importing the
module of :data:`corix.registry.BUILTIN_PLUGINS` it names and calling its ``register``
(plain code, so a source checkout needs no installed metadata), then, on the first read
of any registry, a third party's, through the ``corix.plugins`` entry-point group::

    # your pyproject.toml
    [project.entry-points."corix.plugins"]
    acme = "acme_corix.plugin:register"

    # acme_corix/plugin.py
    from corix.apps import ADAPTERS
    from corix.registry import Plugin

    def register(plugin: Plugin) -> None:
        plugin.add(ADAPTERS, "echo", make_echo_application)

A third party's names are namespaced by its distribution (``acme_corix.echo``); corix's
own keep bare names.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from corix.apps import ADAPTERS, AdapterFactory
from corix.assessment import ANNOTATORS, SETTLING_RULES, AnnotatorFactory, SettlingRule
from corix.execution import LEVEL_PLANNERS, WORK_HANDLERS, Planner, WorkHandler
from corix.levels import STRATEGIES, STYLES, AttackStrategy, MessageStyle
from corix.measurement import SUMMARIZERS, Summarizer
from corix.registry import Registry
from corix.scenarios import PACK_FOLDERS

__all__ = ["EXTENSION_POINTS", "ExtensionPoint"]


@dataclass(frozen=True)
class ExtensionPoint:
    """One registry: its name, the package that exports it, what a component is and does.

    ``component`` is the type a registered item has; ``signature`` spells it out for a
    reader; ``builtins`` names the module that registers corix's own.
    """

    name: str
    package: str
    registry: Registry[Any]
    component: object
    signature: str
    what: str

    @property
    def builtins(self) -> str | None:
        return self.registry.builtins


EXTENSION_POINTS: tuple[ExtensionPoint, ...] = (
    ExtensionPoint(
        name="ADAPTERS",
        package="corix.apps",
        registry=ADAPTERS,
        component=AdapterFactory,
        signature="(AdapterSpec) -> Application",
        what="Application adapter kinds: the KIND of a `KIND:TARGET` spec (plans, "
        "`corix app check`) builds the application under test.",
    ),
    ExtensionPoint(
        name="LEVEL_PLANNERS",
        package="corix.execution",
        registry=LEVEL_PLANNERS,
        component=Planner,
        signature="(Plan, LevelSettings, packs: dict[str, ScenarioPack], run_id: str) "
        "-> Iterator[WorkItem]",
        what="Testing levels by the name a plan gives them: a level's planner turns the plan "
        "into its work items (`execute_plan`, preflight).",
    ),
    ExtensionPoint(
        name="WORK_HANDLERS",
        package="corix.execution",
        registry=WORK_HANDLERS,
        component=WorkHandler,
        signature="async (WorkItem, RunContext) -> None",
        what="How a work item of a kind (`WorkItem.kind`) is played and stored: what an "
        "executor calls for every item of a run.",
    ),
    ExtensionPoint(
        name="STRATEGIES",
        package="corix.levels",
        registry=STRATEGIES,
        component=AttackStrategy,
        signature="AttackStrategy(name, description, turns)",
        what="Red-teaming strategies a simulated red teamer follows (a red-teaming level's "
        "`strategies`; all by default).",
    ),
    ExtensionPoint(
        name="STYLES",
        package="corix.levels",
        registry=STYLES,
        component=MessageStyle,
        signature="MessageStyle(name, description, transform: (str) -> str)",
        what="Message styles a scripted field tester writes in, each drawn in turn.",
    ),
    ExtensionPoint(
        name="ANNOTATORS",
        package="corix.assessment",
        registry=ANNOTATORS,
        component=AnnotatorFactory,
        signature="(AnnotatorSetup) -> Annotator",
        what="Annotators by the name `corix annotate --annotator` takes: each judges a "
        "blinded session and returns its answers.",
    ),
    ExtensionPoint(
        name="SETTLING_RULES",
        package="corix.assessment",
        registry=SETTLING_RULES,
        component=SettlingRule,
        signature="SettlingRule(name, description, settle: (values, RiskOrder) -> Settled)",
        what="How one annotator's repeated values, or several annotators' verdicts, settle "
        "into one label (a measurement specification's `settling`).",
    ),
    ExtensionPoint(
        name="SUMMARIZERS",
        package="corix.measurement",
        registry=SUMMARIZERS,
        component=type[Summarizer],
        signature="a Summarizer subclass (pydantic; fields are its parameters)",
        what="CoRIx tree node summarizers by the name a tree file gives a node.",
    ),
    ExtensionPoint(
        name="PACK_FOLDERS",
        package="corix.scenarios",
        registry=PACK_FOLDERS,
        component=Path,
        signature="Path (the folder holding the pack's pack.yaml)",
        what="Scenario packs by the name a plan or `corix packs show` gives.",
    ),
)
