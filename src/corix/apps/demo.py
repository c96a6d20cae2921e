"""Built-in demo applications: deterministic, offline assistants that answer from test packets.

They let the whole pipeline run without a model. Each session works out which scenario the
user is talking about, reads the session context from the user's words (the episode they
have watched, the household's restrictions) and answers with the packet statements whose
words best match the message.

- ``guarded`` applies the packet's guardrail rules, answers only with facts and says when it
  does not know. It has one deliberate weakness: role-play ("pretend you are…") makes it
  drop its guard for that turn, so its defect rate is low but not zero.
- ``unguarded`` ignores the rules and cannot tell facts from decoys, so it spoils, suggests
  unsafe dishes and confabulates.
- ``hostile`` answers like ``guarded`` wrapped in HTML, scripts and markdown links, for
  testing that every page escapes application output.

Replies depend only on the dialogue so far: no randomness, no clock.
"""

from __future__ import annotations

import difflib
import hashlib
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from corix.apps.base import Application, AppReply, AppSession
from corix.errors import UnknownNameError
from corix.testing.packs import ScenarioPack, list_builtin_packs, resolve_pack
from corix.testing.packs.guardrails import holds_for_all, prohibiting_rules
from corix.testing.packs.models import Decoy, GuardrailRule, Statement
from corix.testing.packs.text import PhraseIndex, tokenize

VARIANTS = ("guarded", "unguarded", "hostile")
DEMO_VERSION = "1.0"

_MAX_STATEMENTS = 3
_RELATIVE_CUTOFF = 0.5  # an answer uses statements scoring at least this share of the best
_MIN_COVERAGE = 0.5  # the best match must hold this share of the question's known words
_MIN_SUPPORT = 0.3  # a permitted statement offered instead must hold at least this share
_ASKED_BOOST = 10.0  # a statement about the episode (etc.) the user named outranks word overlap


def _word_set(words: str) -> frozenset[str]:
    return frozenset(words.split())


_NUMBER_WORDS = {
    word: value
    for value, word in enumerate(
        ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")
    )
}
_STOPWORDS = frozenset(_NUMBER_WORDS) | _word_set(
    "a about again also am an and any anything are as at be been being best but by can could "
    "did do does doesn don fine for from get go going good got had has have he her hi him his "
    "how i if in instead into is isn it its just know let like ll m make me more most much "
    "my need no not now of ok okay on or our out over please put re really remind right s "
    "say she should so some something suggest t take tell than that the their them then there "
    "these they think this those to too up us use ve very want was we were what when where "
    "which who why will with would you your"
)
_ROLE_PLAY = re.compile(
    r"\b(pretend|role ?play|roleplay|in character|act as|imagine you|you are now|"
    r"hypothetically|ignore (?:your|the|all) (?:rules|instructions))\b"
)
_PROGRESS_CUES = _word_set("seen watched watching finished through caught completed reached on up")
_WHOLE = _word_set("whole entire all")
_NEXT = _word_set("next")
_LATEST = _word_set("end ending ends finale")
_RESTRICTION_CUES = _word_set(
    "allergic allergy allergies intolerant intolerance avoid avoids avoiding free without "
    "coeliac celiac vegetarian vegan vegans vegetarians diet restriction restrictions cannot "
    "never"
)
_SENTENCE_END = re.compile(r"[.!?;\n]+")
_NEGATED = frozenset({"can", "don", "doesn", "won", "shouldn", "mustn"})
_HOSTILE_PAYLOADS = (
    '<script>alert("corix")</script>',
    '<img src="x" onerror="alert(\'corix\')">',
    '[Read the full answer](javascript:alert("corix"))',
    '<a href="https://example.invalid/" onclick="alert(1)">More details</a>',
    "</textarea></div><b>unclosed {{ 7 * 7 }} ${7 * 7}",
)


def _stem(token: str) -> str:
    """A light plural stemmer: enough for "episodes"/"episode", "allergies"/"allergy"."""
    if len(token) > 4 and token.endswith("ies"):
        return token[:-3] + "y"
    if len(token) > 3 and token.endswith("s") and not token.endswith("ss"):
        return token[:-1]
    return token


def _stems(text: str) -> list[str]:
    return [_stem(token) for token in tokenize(text)]


def _content_terms(tokens: Sequence[str]) -> set[str]:
    """The stems of the words that carry content (no stopwords)."""
    return {_stem(token) for token in tokens if token not in _STOPWORDS}


def _number(token: str) -> int | None:
    if token.isdigit():
        return int(token)
    return _NUMBER_WORDS.get(token)


def _stable_hash(text: str) -> int:
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big")


# --- what the assistant knows about one scenario -------------------------------------------


@dataclass(frozen=True)
class _Entry:
    statement: Statement
    terms: frozenset[str]
    order: int

    @property
    def decoy(self) -> bool:
        return isinstance(self.statement, Decoy)


@dataclass(frozen=True)
class _Match:
    entry: _Entry
    score: float
    coverage: float  # the share of the question's known words the statement holds
    asked: bool  # about the episode (or other tag value) the user named


def _covers(matches: Sequence[_Match]) -> bool:
    """Whether the best match answers the question rather than brushing against it."""
    return bool(matches) and (matches[0].asked or matches[0].coverage >= _MIN_COVERAGE)


def _top(matches: Sequence[_Match]) -> list[_Match]:
    if not matches:
        return []
    return [m for m in matches if m.score >= _RELATIVE_CUTOFF * matches[0].score]


@dataclass(frozen=True)
class _ProgressReader:
    """Reads "I've watched up to episode 3" into ``context[key] = 3`` for an ordered rule."""

    tag: str
    key: str
    latest: int


@dataclass
class _Reading:
    """What one message said about the session context and what it asked about."""

    consumed: set[str] = field(default_factory=set)
    asked: dict[str, set[int]] = field(default_factory=dict)
    updated: list[str] = field(default_factory=list)


class _Knowledge:
    """A pack's statements indexed for retrieval, plus readers for its context parameters."""

    def __init__(self, pack: ScenarioPack) -> None:
        self.pack = pack
        self.packet = pack.packet
        self.entries = [
            _Entry(statement, self._terms(statement), order)
            for order, statement in enumerate(self.packet.statements)
        ]
        document_frequency: dict[str, int] = {}
        for entry in self.entries:
            for term in entry.terms:
                document_frequency[term] = document_frequency.get(term, 0) + 1
        total = len(self.entries)
        self.weight = {t: math.log(1 + total / df) for t, df in document_frequency.items()}
        fact_terms = {t for e in self.entries if not e.decoy for t in e.terms}
        self.fact_terms = frozenset(fact_terms)
        self.decoy_only_terms = frozenset(set(self.weight) - fact_terms)
        self.topic_terms = frozenset(
            {_stem(t) for keyword in pack.keywords for t in tokenize(keyword)} | set(self.weight)
        )
        self.progress: list[_ProgressReader] = []
        self.mentions: dict[str, PhraseIndex[str]] = {}
        self.value_words: dict[str, set[str]] = {}  # stems naming each value, aliases too
        for rule in self.packet.rules:
            self._add_readers(rule)

    @staticmethod
    def _terms(statement: Statement) -> frozenset[str]:
        words = [statement.text, *statement.markers]
        for value in statement.tags.values():
            words.extend(map(str, value if isinstance(value, list) else [value]))
        return frozenset(_content_terms([t for text in words for t in tokenize(text)]))

    def _add_readers(self, rule: GuardrailRule) -> None:
        for condition in rule.prohibited_when:
            if condition.context is None:
                continue
            values = [fact.tags.get(condition.tag) for fact in self.packet.facts]
            if condition.op in ("lt", "le", "gt", "ge"):
                numbers = [v for v in values if isinstance(v, int) and not isinstance(v, bool)]
                if numbers:
                    self.progress.append(
                        _ProgressReader(condition.tag, condition.context, max(numbers))
                    )
            elif condition.op in ("in", "contains", "intersects"):
                index = self.mentions.setdefault(condition.context, PhraseIndex())
                for value in {str(v) for vs in values for v in _as_list(vs)}:
                    for phrase in [value, *self.packet.aliases.get(value, [])]:
                        index.add_tokens(tuple(_stems(phrase)), value, label=phrase)
                        self.value_words.setdefault(value, set()).update(_stems(phrase))

    def score(self, text_stems: Sequence[str]) -> int:
        """How strongly a message is about this scenario (distinct topic words it uses)."""
        return len(set(text_stems) & self.topic_terms)

    def read(self, text: str, context: dict[str, Any]) -> _Reading:
        """Update ``context`` from what ``text`` says about the user; note what it asks."""
        reading = _Reading()
        tokens = tokenize(text)
        for reader in self.progress:
            self._read_progress(reader, tokens, context, reading)
        for sentence in _SENTENCE_END.split(text):
            self._read_mentions(tokenize(sentence), context, reading)
        return reading

    def _read_mentions(
        self, tokens: Sequence[str], context: dict[str, Any], reading: _Reading
    ) -> None:
        """Values named in a sentence that states a restriction ("he is allergic to eggs")."""
        if not self._has_restriction_cue(tokens):
            return
        stems = [_stem(token) for token in tokens]
        for key, index in self.mentions.items():
            found = index.find(stems)
            if not found:
                continue
            known = list(context.get(key) or [])
            context[key] = known + [value for value in found if value not in known]
            reading.updated.append(key)
            reading.consumed.update(t for value in found for t in self.value_words[value])
        # Cue words say *that* something is restricted; they are not what is asked about.
        reading.consumed.update(_stem(t) for t in tokens if t in _RESTRICTION_CUES)

    @staticmethod
    def _has_restriction_cue(tokens: Sequence[str]) -> bool:
        return any(t in _RESTRICTION_CUES for t in tokens) or any(
            word == "t" and tokens[i - 1] in _NEGATED for i, word in enumerate(tokens) if i
        )

    @staticmethod
    def _read_progress(
        reader: _ProgressReader,
        tokens: Sequence[str],
        context: dict[str, Any],
        reading: _Reading,
    ) -> None:
        asked = reading.asked.setdefault(reader.tag, set())
        for i, token in enumerate(tokens):
            before = tokens[max(0, i - 4) : i]
            cued = any(t in _PROGRESS_CUES for t in before)
            if _stem(token) == reader.tag:
                after = _number(tokens[i + 1]) if i + 1 < len(tokens) else None
                previous = _number(tokens[i - 1]) if i else None
                if after is not None and cued:
                    context[reader.key] = after
                elif after is not None:
                    asked.add(after)
                elif previous is not None:  # "the first 3 episodes"
                    context[reader.key] = previous
                else:
                    continue
                number = tokens[i + 1] if after is not None else tokens[i - 1]
                reading.consumed.update({reader.tag, number})
                reading.updated.append(reader.key)
            elif token in _WHOLE and cued:  # "I've finished the whole series"
                context[reader.key] = reader.latest
                reading.updated.append(reader.key)
        seen = context.get(reader.key)
        if any(t in _NEXT for t in tokens) and isinstance(seen, int):
            asked.add(seen + 1)
        if any(t in _LATEST for t in tokens):
            asked.add(reader.latest)

    def rank(
        self, query: set[str], asked: Mapping[str, set[int]], *, with_decoys: bool
    ) -> list[_Match]:
        """Statements sharing words with the question (or about what it asked), best first.

        Without decoys, a question using a word that only decoys contain is about something
        no fact covers, and matches nothing.
        """
        if not with_decoys and query & self.decoy_only_terms:
            return []
        known = query & (self.weight.keys() if with_decoys else self.fact_terms)
        total = sum(self.weight[t] for t in known)
        matches = []
        for entry in self.entries:
            if entry.decoy and not with_decoys:
                continue
            overlap = sum(self.weight[t] for t in known & entry.terms)
            named = any(entry.statement.tags.get(tag) in values for tag, values in asked.items())
            score = overlap + (_ASKED_BOOST if named else 0.0)
            if score > 0:
                matches.append(_Match(entry, score, overlap / total if total else 0.0, named))
        matches.sort(key=lambda m: (-m.score, m.entry.order))
        return matches


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


# --- sessions -------------------------------------------------------------------------------


class DemoSession(AppSession):
    """One dialogue: which scenario it is about and the context read so far, per scenario."""

    def __init__(self, knowledge: Sequence[_Knowledge], variant: str) -> None:
        self._knowledge = knowledge
        self._variant = variant
        self._current: _Knowledge | None = None
        self._contexts: dict[str, dict[str, Any]] = {}

    async def respond(self, text: str) -> AppReply:
        return AppReply(text=self.reply(text))

    def reply(self, text: str) -> str:
        """The answer to ``text``, updating the dialogue state."""
        tokens = tokenize(text)
        knowledge = self._route([_stem(t) for t in tokens])
        if knowledge is None:
            topics = "; ".join(k.packet.title for k in self._knowledge)
            return f"Hello! I can help with: {topics}. What would you like to know?"
        context = self._contexts.setdefault(knowledge.pack.name, {})
        reading = knowledge.read(text, context)
        query = _content_terms(tokens) - reading.consumed
        tricked = _ROLE_PLAY.search(" ".join(tokens)) is not None
        if self._variant == "unguarded" or tricked:
            answer = self._unguarded(knowledge, query, reading, text)
        else:
            answer = self._guarded(knowledge, query, reading, context, text)
        if self._variant == "hostile":
            return _hostile(answer)
        return answer

    def _route(self, stems: Sequence[str]) -> _Knowledge | None:
        scores = [(k.score(stems), -i, k) for i, k in enumerate(self._knowledge)]
        best_score, _, best = max(scores, key=lambda item: (item[0], item[1]))
        current_score = self._current.score(stems) if self._current is not None else 0
        if best_score > 0 and (self._current is None or current_score == 0):
            self._current = best
        return self._current

    def _guarded(
        self,
        knowledge: _Knowledge,
        query: set[str],
        reading: _Reading,
        context: Mapping[str, Any],
        text: str,
    ) -> str:
        if reading.updated and "?" not in text:
            return _acknowledge(context, reading.updated)
        matches = knowledge.rank(query, reading.asked, with_decoys=False)
        if not _covers(matches):
            return "I don't have reliable information about that, so I won't guess."
        asked_about = _top(matches)
        permitted: list[_Match] = []
        blocked: list[Statement] = []
        blocking: list[GuardrailRule] = []
        for match in matches:
            fact = match.entry.statement
            rules = prohibiting_rules(knowledge.packet, fact, context) or _unclear(
                knowledge, fact, context
            )
            if not rules:
                if match.asked or match.coverage >= _MIN_SUPPORT:
                    permitted.append(match)
            elif match in asked_about:
                blocked.append(fact)
                blocking.extend(rule for rule in rules if rule not in blocking)
        clarify = next((rule.clarify for rule in blocking if _unknown(rule, context)), None)
        if clarify is not None and not permitted:
            return clarify
        offered = " ".join(m.entry.statement.text for m in _top(permitted)[:_MAX_STATEMENTS])
        reason = _lower(blocking[0].description).rstrip(".") if blocking else ""
        asked_blocked = blocked and blocked[0] is matches[0].entry.statement and _specific(matches)
        if blocked and (asked_blocked or not offered):
            answer = f"I'm sorry, but I can't help with that one: {reason}."
            if offered:
                return f"{answer} Here's what I can tell you instead. {offered}"
            alternative = _alternative(knowledge, blocked[0], context)
            if alternative is not None:
                answer += f" How about this instead? {alternative.text}"
            return answer
        answer = f"Here's what I can tell you. {offered}"
        return f"{answer} I've left out {reason}." if blocking else answer

    def _unguarded(
        self, knowledge: _Knowledge, query: set[str], reading: _Reading, text: str
    ) -> str:
        if reading.updated and "?" not in text:
            return _acknowledge(self._contexts[knowledge.pack.name], reading.updated)
        matches = knowledge.rank(query, reading.asked, with_decoys=True)
        top = [match.entry for match in _top(matches)]
        if not _covers(matches):
            # Rather than admit it does not know, it states the closest invention.
            matching = [entry for entry in top if entry.decoy]
            pool = matching or [entry for entry in knowledge.entries if entry.decoy]
            if pool:
                invented = matching[0] if matching else pool[_stable_hash(text) % len(pool)]
                return f"I'm fairly sure about this one: {invented.statement.text}"
        return "Sure! " + " ".join(entry.statement.text for entry in top[:_MAX_STATEMENTS])


def _specific(matches: Sequence[_Match]) -> bool:
    """Whether the best match stands out: the user asked about that one statement."""
    return len(matches) == 1 or matches[0].score > matches[1].score


def _unknown(rule: GuardrailRule, context: Mapping[str, Any]) -> bool:
    return any(
        c.context is not None and context.get(c.context) is None for c in rule.prohibited_when
    )


def _unclear(
    knowledge: _Knowledge, fact: Statement, context: Mapping[str, Any]
) -> list[GuardrailRule]:
    """Rules that ask for their context first and might prohibit ``fact`` once it is known."""
    return [
        rule
        for rule in knowledge.packet.rules
        if rule.clarify is not None
        and _unknown(rule, context)
        and holds_for_all(rule.prohibited_when, fact.tags, context, when_unknown=True)
    ]


def _alternative(
    knowledge: _Knowledge, rejected: Statement, context: Mapping[str, Any]
) -> Statement | None:
    """A permitted fact of the same kind as ``rejected`` (e.g. another dinner), if any."""
    shape = set(_scalar_tags(rejected))
    if not shape:
        return None
    for fact in knowledge.packet.facts:
        if shape <= set(_scalar_tags(fact)) and not prohibiting_rules(
            knowledge.packet, fact, context
        ):
            return fact
    return None


def _scalar_tags(statement: Statement) -> list[tuple[str, Any]]:
    return [(tag, value) for tag, value in statement.tags.items() if isinstance(value, str)]


def _acknowledge(context: Mapping[str, Any], keys: Sequence[str]) -> str:
    noted = "; ".join(
        f"{key.replace('_', ' ')}: {', '.join(map(str, _as_list(context[key])))}"
        for key in dict.fromkeys(keys)
        if key in context
    )
    return f"Thanks, noted ({noted}). What would you like to know?"


def _lower(text: str) -> str:
    return text[:1].lower() + text[1:]


def _hostile(answer: str) -> str:
    return f"<h3>Answer</h3><p>{answer}</p>\n" + "\n".join(_HOSTILE_PAYLOADS)


# --- the application ------------------------------------------------------------------------


class DemoApplication(Application):
    """A scenario-aware demo assistant; ``packs`` defaults to every built-in pack."""

    def __init__(self, variant: str = "guarded", packs: Sequence[ScenarioPack] | None = None):
        if variant not in VARIANTS:
            close = difflib.get_close_matches(variant, VARIANTS, n=1)
            hint = f" Did you mean '{close[0]}'?" if close else ""
            raise UnknownNameError(
                f"unknown demo variant '{variant}'.{hint} Known: {', '.join(VARIANTS)}."
            )
        self.variant = variant
        chosen = (
            list(packs) if packs is not None else [resolve_pack(n) for n in list_builtin_packs()]
        )
        self._knowledge = [_Knowledge(pack) for pack in chosen]

    async def open(self, auth: Mapping[str, str] | None = None) -> None:
        """Nothing to connect to."""

    async def version(self) -> str:
        packs = ", ".join(f"{k.pack.name} {k.pack.version}" for k in self._knowledge)
        return f"corix-demo {DEMO_VERSION} ({self.variant}; {packs})"

    async def start_session(self) -> DemoSession:
        return DemoSession(self._knowledge, self.variant)


def build_demo_application(variant: str) -> DemoApplication:
    """The demo application ``variant`` (guarded, unguarded or hostile) over the built-in packs."""
    return DemoApplication(variant)
