"""Plain-text transcripts for the terminal."""

from __future__ import annotations

from collections.abc import Sequence

from corix.domain import QuestionnaireAnswer, SessionRecord, step_views

STEP_CHARS = 4000
"""A tool call or result longer than this is cut in the terminal (the export keeps it whole)."""


def render_transcript(record: SessionRecord, answers: Sequence[QuestionnaireAnswer] = ()) -> str:
    lines = [
        f"session {record.id}",
        f"application {record.application} · scenario {record.scenario} · level "
        f"{record.level.value} · source {record.source.value}",
        f"ended: {record.end_reason.value if record.end_reason else record.status.value}"
        + (f" ({record.end_detail})" if record.end_detail else ""),
    ]
    if record.strategy:
        lines.append(f"strategy: {record.strategy}")
    if record.persona:
        lines.append(f"persona: {record.persona}")
    repairs = sum(turn.simulator_repairs for turn in record.turns)
    if repairs:
        lines.append(f"simulator repairs: {repairs} (messages re-asked or cleaned of tags)")
    lines.append("")
    for turn in record.turns:
        if turn.messages is not None:
            # A tool-using turn: every step in order, call ids and system messages included.
            views = step_views(turn.messages, blinded=False, limit=STEP_CHARS)
            lines += [f"[{turn.index}] {view.label}: {view.text}" for view in views]
            timing = (
                f"{turn.latency_ms:.0f} ms{', cut at the token limit' if turn.truncated else ''}"
            )
            lines.append(
                f"[{turn.index}] ERROR: {turn.error}"
                if turn.error
                else f"[{turn.index}] ({timing})"
            )
            lines.append("")
            continue
        lines.append(f"[{turn.index}] user: {turn.user_text}")
        if turn.error is not None:
            lines.append(f"[{turn.index}] ERROR: {turn.error}")
        else:
            lines.append(
                f"[{turn.index}] assistant ({turn.latency_ms:.0f} ms"
                f"{', cut at the token limit' if turn.truncated else ''}): {turn.response_text}"
            )
        lines.append("")
    if answers:
        lines.append("questionnaire:")
        for answer in answers:
            value = answer.text if answer.value is None else f"{answer.value:g}"
            lines.append(f"  {answer.item_id}: {value}")
    return "\n".join(lines)
