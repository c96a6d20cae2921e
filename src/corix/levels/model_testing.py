"""The model-testing level: scripted prompts from a pack, sent as written."""

from __future__ import annotations

from collections.abc import Iterator

from pydantic import BaseModel, ConfigDict, Field
from pydantic_core import to_jsonable_python

from corix.apps import ApplicationError, AppReply
from corix.domain import (
    EndReason,
    JsonObject,
    Level,
    LevelSettings,
    Plan,
    Provenance,
    SessionBrief,
    SessionSource,
)
from corix.execution import RunContext, WorkItem
from corix.levels.recorder import SessionRecorder
from corix.scenarios import Probe, ScenarioPack, ScriptedTest, Toolbox, expand_model_tests

KIND = "model_test"


class ModelTestSpec(BaseModel):
    """Everything that defines one scripted session; the payload of its work item."""

    model_config = ConfigDict(frozen=True)

    turns: tuple[str, ...] = Field(min_length=1)
    parameters: JsonObject
    template: str
    template_version: str
    probe: Probe
    required_facts: tuple[str, ...]


def plan_model_tests(
    plan: Plan, settings: LevelSettings, packs: dict[str, ScenarioPack], run_id: str
) -> Iterator[WorkItem]:
    """Every scripted test of every pack, for every application, ``repeats`` times.

    ``sessions`` caps the tests per application × scenario (the first ones in the pack's
    stable order), which keeps a smoke run small.
    """
    for scenario, pack in packs.items():
        tests = expand_model_tests(pack, plan.seed)
        if settings.sessions is not None:
            tests = tests[: settings.sessions]
        for app in plan.applications_for(pack.name):
            for repeat in range(settings.repeats):
                for test in tests:
                    yield WorkItem(
                        run_id=run_id,
                        key=f"{app.name}/{scenario}/{Level.MODEL_TESTING.value}/{test.key}/{repeat}",
                        kind=KIND,
                        application=app.name,
                        scenario=scenario,
                        level=Level.MODEL_TESTING,
                        seed=plan.seed,
                        payload=spec_payload(test),
                    )


def spec_payload(test: ScriptedTest) -> JsonObject:
    """``ModelTestSpec``'s JSON form, made from a test the pack already validated (the
    worker validates it as a ``ModelTestSpec``)."""
    return {
        "turns": list(test.turns),
        "parameters": to_jsonable_python(test.parameters),
        "template": test.template,
        "template_version": test.template_version,
        "probe": test.probe.value,
        "required_facts": list(test.required_facts),
    }


async def run_model_test(item: WorkItem, ctx: RunContext) -> None:
    app = ctx.applications[item.application]
    pack = ctx.packs[item.scenario]
    spec = ModelTestSpec.model_validate(item.payload)
    recorder = SessionRecorder(
        ctx,
        item,
        source=SessionSource.SCRIPTED,
        provenance=Provenance(
            application=app.name,
            application_version=app.version,
            scenario=pack.name,
            scenario_version=pack.version,
            template=spec.template,
            template_version=spec.template_version,
            parameters=dict(spec.parameters),
            brief=SessionBrief(probe=spec.probe, required_facts=spec.required_facts),
            system_prompt=app.system_prompt,
            engine="script",
            seed=item.seed,
        ),
    )
    turns = spec.turns
    async with app.app.session_slot():
        try:
            session = await app.app.open_session(Toolbox.of(pack))
        except ApplicationError as exc:
            reply = AppReply(error=f"could not start a session: {exc}")
            recorder.record_turn(turns[0], reply, 0.0)
            recorder.finish(EndReason.APP_ERROR)
            return
        # A failed turn ends the dialogue: later scripted turns assume the earlier answers.
        end_reason = EndReason.SCRIPT_DONE
        try:
            for text in turns:
                if (await recorder.exchange(session, text)).failed:
                    end_reason = EndReason.APP_ERROR
                    break
        finally:
            await session.end()
    recorder.finish(end_reason)
