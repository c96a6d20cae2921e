"""Fitting an annotator's prompt into the judge's declared context window, by a recorded rule.

A judge with a small window (4,096 tokens is common for local models) cannot read a long
dialogue whole beside the guidelines, and a prompt over the window is refused outright.
When the endpoint declares ``context_window``, the prompt must leave room for the reply
(the endpoint's ``max_tokens``, else :data:`REPLY_RESERVE`) and for one re-ask, and token
counts are estimated (about four characters a token), so a fifth of the window is kept
free besides.

The rule, the same for every annotator: every message of the dialogue keeps its place
(turn-level questions still answer each turn), and messages longer than a cap are cut in
the middle — head and tail kept, the cut marked in the text with the number of characters
left out. The cap is the largest that fits, never below :data:`MIN_CAP_CHARS`; a dialogue
that does not fit even then is not judged, and the pass fails saying so. What was cut is
recorded in the pass's provenance (:meth:`ContextCut.record`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from corix.assessment.annotators.base import ContextCutRecord
from corix.assessment.annotators.view import AnnotatorView, ViewTurn
from corix.llm import ChatMessage, estimate_tokens, usable_context

REPLY_RESERVE = 512
"""Tokens kept for the judge's reply when the endpoint sets no ``max_tokens``."""
REASK_RESERVE = 160
"""Tokens kept for one re-ask message listing what was wrong."""
MIN_CAP_CHARS = 120
"""Messages are never cut shorter than this: below it a judge reads nothing useful."""

RULE = "messages cut in the middle to at most {cap} characters"


class DialogueTooLong(Exception):
    """Even cut to :data:`MIN_CAP_CHARS` per message, the prompt exceeds the budget."""


@dataclass(frozen=True)
class ContextCut:
    """How a dialogue was cut to fit: the rule, and how much it left out."""

    context_window: int
    budget_tokens: int
    cap_chars: int
    messages_cut: int
    chars_left_out: int

    def record(self) -> ContextCutRecord:
        return ContextCutRecord(
            rule=RULE.format(cap=self.cap_chars),
            context_window=self.context_window,
            budget_tokens=self.budget_tokens,
            messages_cut=self.messages_cut,
            chars_left_out=self.chars_left_out,
        )


def prompt_budget(context_window: int, max_tokens: int | None) -> int:
    """The prompt tokens a window holds beside the reply, one re-ask and the safety share."""
    return usable_context(context_window) - (max_tokens or REPLY_RESERVE) - REASK_RESERVE


def fits_window(
    messages: Sequence[ChatMessage], context_window: int, max_tokens: int | None
) -> bool:
    """Whether ``messages`` and a reply fit the window, the safety share kept free."""
    return _tokens(messages) + (max_tokens or REPLY_RESERVE) <= usable_context(context_window)


def fit_dialogue(
    view: AnnotatorView,
    render: Callable[[AnnotatorView], list[ChatMessage]],
    *,
    context_window: int,
    max_tokens: int | None,
) -> tuple[list[ChatMessage], ContextCut | None]:
    """The prompt ``render`` makes for ``view``, its messages cut to fit if need be."""
    budget = prompt_budget(context_window, max_tokens)
    messages = render(view)
    if _tokens(messages) <= budget:
        return messages, None
    longest = max((len(text) for text in _texts(view.turns)), default=0)
    low, high = MIN_CAP_CHARS, longest - 1
    if high < low or _tokens(render(_capped(view, low))) > budget:
        raise DialogueTooLong(
            f"the dialogue does not fit the context window of {context_window} tokens, "
            f"even with every message cut to {MIN_CAP_CHARS} characters"
        )
    while low < high:  # the largest cap that fits
        middle = (low + high + 1) // 2
        if _tokens(render(_capped(view, middle))) <= budget:
            low = middle
        else:
            high = middle - 1
    texts = _texts(view.turns)
    cut = ContextCut(
        context_window=context_window,
        budget_tokens=budget,
        cap_chars=low,
        messages_cut=sum(len(text) > low for text in texts),
        chars_left_out=sum(len(text) - low for text in texts if len(text) > low),
    )
    return render(_capped(view, low)), cut


def cut_middle(text: str, cap: int) -> str:
    """``text`` at most about ``cap`` characters: head and tail kept, the middle marked."""
    if len(text) <= cap:
        return text
    left_out = len(text) - cap
    head = cap // 2
    return f"{text[:head]} […{left_out} characters left out…] {text[head + left_out :]}"


def _capped(view: AnnotatorView, cap: int) -> AnnotatorView:
    turns = tuple(
        turn.model_copy(
            update={
                "user_text": cut_middle(turn.user_text, cap),
                "response_text": None
                if turn.response_text is None
                else cut_middle(turn.response_text, cap),
            }
        )
        for turn in view.turns
    )
    return view.model_copy(update={"turns": turns})


def _texts(turns: Sequence[ViewTurn]) -> list[str]:
    texts = [turn.user_text for turn in turns]
    texts += [turn.response_text for turn in turns if turn.response_text is not None]
    return texts


def _tokens(messages: Sequence[ChatMessage]) -> int:
    return sum(estimate_tokens(message.content) for message in messages)
