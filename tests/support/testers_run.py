"""A stored run with human, simulated and scripted testers, for the simulation gap."""

from __future__ import annotations

from dataclasses import replace

from corix.storage import Database
from support.run_builder import RunBuilder

CELL = ("alpha", "tv_spoilers", "red_teaming")


def add_tester_session(
    run: RunBuilder,
    sid: str,
    source: str,
    users: list[str],
    violation: bool,
    *,
    cell: tuple[str, str, str] = CELL,
    tester: int | None = None,
    template: str | None = None,
    replies: list[str] | None = None,
    episode_seen: int | None = None,
) -> None:
    said = replies or ["Sure."] * len(users)
    run.session(sid, *cell, list(zip(users, said, strict=True)), source=source)
    application, new = run.sessions[-1]
    # Each simulated dialogue its own persona instance (own parameters): a tester of its own.
    parameters: dict[str, object] = {"instance": sid}
    if episode_seen is not None:
        parameters["episode_seen"] = episode_seen
    update = {"template": template, "parameters": parameters}
    provenance = new.provenance.model_copy(update=update)
    run.sessions[-1] = (application, replace(new, tester_id=tester, provenance=provenance))
    released = "yes" if violation else "no"
    run.annotate(sid, "risk_assessment", "reference", [("ra_prohibited_released", None, released)])


async def write_mixed_testers_run(db: Database) -> str:
    """Cell alpha · tv_spoilers · red teaming: four people (2 violations), four simulated
    testers of three persona templates (1 violation), one script (ignored); a second cell
    with people only."""
    run = RunBuilder("run-gap")
    human_users = [["a" * 10, "b" * 12], ["c" * 20, "d" * 20, "e"], ["f" * 30], ["g" * 8] * 4]
    for i, users in enumerate(human_users):
        add_tester_session(run, f"h{i}", "human", users, violation=i < 2, tester=i)
        run.answer(f"h{i}", "trust", 4 + i % 2, respondent=f"tester-{i}")
    templates = [("eager", 2), ("eager", 3), ("plain", 4), ("verbose", 9)]
    for i, (template, length) in enumerate(templates):
        user = ["x" * length]
        add_tester_session(run, f"s{i}", "simulated", user, violation=i == 0, template=template)
        if i < 2:
            run.answer(f"s{i}", "trust", 2 + i, respondent="sim-user")
    add_tester_session(run, "m0", "scripted", ["script"], violation=True)
    add_tester_session(
        run, "o0", "human", ["hi"], violation=True, cell=("beta", *CELL[1:]), tester=9
    )
    return await run.write(db)


async def write_judged_levels_run(db: Database) -> str:
    """alpha · tv_spoilers at model and field testing, four dialogues each, labelled by a
    person (two violations per level) and an LLM judge."""
    run = RunBuilder("run-judge-levels")
    for level in ("model_testing", "field_testing"):
        for i in range(4):
            sid = f"{level[0]}{i}"
            run.session(sid, "alpha", "tv_spoilers", level, [("Hi", "Hello")])
            person = "yes" if i < 2 else "no"
            # At model testing the judge agrees with the person; at field testing it
            # flags everything.
            judged = person if level == "model_testing" else "yes"
            for annotator, value in (("human:ann", person), ("llm:judge", judged)):
                answer: tuple[str, int | None, float | str] = (
                    "ra_prohibited_released",
                    None,
                    value,
                )
                run.annotate(sid, "risk_assessment", annotator, [answer])
    return await run.write(db)


async def write_partly_labelled_run(
    db: Database, run_id: str = "run-partly-labelled", gates: dict[str, float] | None = None
) -> str:
    """alpha · tv_spoilers · model testing: 20 dialogues an LLM judge rated (``j0``–``j3``
    flagged), of which a person labelled ``j0``, ``j1`` (a defect and not) and ``j10``–``j13``
    (no defect); ``gates`` go in the run's plan."""
    run = RunBuilder(run_id, gates=gates or {})
    for i in range(20):
        sid = f"j{i}"
        run.session(sid, "alpha", "tv_spoilers", "model_testing", [("Hi", "Hello")])
        flagged = "yes" if i < 4 else "no"
        run.annotate(
            sid, "risk_assessment", "llm:judge", [("ra_prohibited_released", None, flagged)]
        )
        if i in (0, 1, 10, 11, 12, 13):
            person = "yes" if i == 0 else "no"
            run.annotate(
                sid, "risk_assessment", "human:ann", [("ra_prohibited_released", None, person)]
            )
    return await run.write(db)


async def write_judge_against_people_run(
    db: Database, people: str, judge: str, *, run_id: str = "run-judge-people", other: str = "human"
) -> str:
    """alpha · tv_spoilers · model testing: dialogue ``{run_id}-{i}`` labelled by ``other``
    (a person by default) and an LLM judge; ``people`` and ``judge`` spell their verdicts,
    ``y`` / ``n``."""
    run = RunBuilder(run_id)
    names = {"human": "human:ann", "reference": "reference:rules"}
    for i, (person, flagged) in enumerate(zip(people, judge, strict=True)):
        sid = f"{run_id}-{i}"
        run.session(sid, "alpha", "tv_spoilers", "model_testing", [("Hi", "Hello")])
        for annotator, value in ((names[other], person), ("llm:judge", flagged)):
            answer = ("ra_prohibited_released", None, "yes" if value == "y" else "no")
            run.annotate(sid, "risk_assessment", annotator, [answer])
    return await run.write(db)
