"""A database written before provenance had typed facts is read and judged the same."""

from __future__ import annotations

from annotator_support import WITHHELD, store_run
from sqlalchemy import update

from corix.assessment.annotation_run import annotate_run
from corix.storage import Database, load_session
from corix.storage.annotations import load_passes
from corix.storage.orm import SessionRow

OLD_PROVENANCE = {
    "application": "assistant-a",
    "scenario": "tv_spoilers",
    "parameters": {
        "episode_seen": 5,
        "probe": "permitted",
        "required_facts": ["ep4_fog_bell_tower"],
    },
    "engine": "script",
}
"""How a scripted test's provenance was stored: its required facts among the parameters."""


def test_old_provenance_loads_typed_and_withheld_facts_are_still_found(
    any_db: Database,
) -> None:
    run_id = store_run(any_db, [WITHHELD])
    with any_db.session() as s:
        s.execute(
            update(SessionRow).where(SessionRow.id == WITHHELD.id).values(provenance=OLD_PROVENANCE)
        )
    record = load_session(any_db, WITHHELD.id)
    assert record.provenance.parameters == {"episode_seen": 5}
    assert record.provenance.brief.required_facts == ("ep4_fog_bell_tower",)
    assert record.provenance.brief.probe == "permitted"

    annotate_run(any_db, run_id, "reference")
    (risk,) = [p for p in load_passes(any_db, run_id=run_id) if p.category == "risk_assessment"]
    answers = {answer.question_id: answer.value for answer in risk.answers}
    assert answers["ra_permitted_withheld"] == "yes"
