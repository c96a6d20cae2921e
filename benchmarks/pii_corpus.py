"""A seeded corpus of dialogues with planted personal identifiers, for measuring recall.

    python benchmarks/pii_corpus.py          # writes benchmarks/pii_corpus.jsonl again

Each line is one session: its turns (the tester's message and the application's reply),
the tester's free-text questionnaire answer, and every planted identifier with where it is
(``turns/3/user``, ``turns/3/response`` or ``questionnaire``), its span, its kind, its
value and, for a name, the ``person`` it names. Kinds: ``NAME`` (a person's first mention
in the release), ``NAME_RECURRENCE`` (the same person again: later in the dialogue, in the
reply, in the questionnaire, in a later session; in other cases, possessive, by first or
last name alone), ``EMAIL_ADDRESS``,
``PHONE_NUMBER``, ``STREET_ADDRESS``, ``DATE_OF_BIRTH``, ``PASSPORT``, ``DRIVING_LICENCE``,
``NATIONAL_ID`` and ``IP_ADDRESS``, each at least 200 identifiers.

Everything comes from the lists and templates below and ``random.Random(SEED)``: the same
script writes the same file. Some templates have no cue a pattern could use ("Yesterday
Sarah Connor told me …", "a 12/04/1990 baby") so the corpus does not flatter the detectors;
the values are invented (documentation IP ranges, fictional numbers).
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

SEED = 20261129
SESSIONS = 320
CORPUS = Path(__file__).with_name("pii_corpus.jsonl")
KINDS = (
    "NAME",
    "NAME_RECURRENCE",
    "EMAIL_ADDRESS",
    "PHONE_NUMBER",
    "STREET_ADDRESS",
    "DATE_OF_BIRTH",
    "PASSPORT",
    "DRIVING_LICENCE",
    "NATIONAL_ID",
    "IP_ADDRESS",
)

FIRST_NAMES = (
    "Sarah", "James", "Amara", "Łukasz", "Mei", "Diego", "Fatima", "Oluwaseun", "Ingrid",
    "Rahul", "Chloé", "Kenji", "Aisha", "Mateo", "Zofia", "Liam", "Priya", "Tomasz", "Hannah",
    "Yusuf", "Elena", "Kwame", "Sofia", "Björn", "Nadia", "Arjun", "Camille", "Dmitri",
    "Grace", "Hamid", "Isabel", "Jonas", "Keiko", "Leila", "Marcus", "Noor", "Oscar",
    "Paloma", "Quentin", "Rosa", "Santiago", "Thandiwe", "Uma", "Viktor", "Wen", "Ximena",
    "Yara", "Zainab", "Aleksander", "Beatriz", "Cormac", "Dagny", "Emeka", "Farah", "Gustavo",
    "Hiroshi", "Ines", "Jean-Luc", "Katarzyna", "Lucía",
)  # fmt: skip
SURNAMES = (
    "Connor", "Okafor", "Nowak", "Chen", "García", "Haddad", "Adeyemi", "Lindqvist", "Sharma",
    "Dubois", "Tanaka", "Rahman", "Fernández", "Wójcik", "O'Brien", "Patel", "Kowalski",
    "Schmidt", "Yilmaz", "Petrova", "Mensah", "Rossi", "Andersson", "Khalil", "Iyer",
    "Moreau", "Volkov", "Nakamura", "Abubakar", "McDonald", "Silva", "Novak", "Horvath",
    "Müller", "Kaur", "Lefèvre", "Ivanova", "Okonkwo", "Santos", "Jensen", "Bianchi",
    "Kimura", "Osei", "Zhang", "Hernández", "Eriksen", "Park", "Dimitrov", "Mahmoud",
    "Whitfield", "Ashworth", "Delacroix", "Brennan", "Castillo", "Fitzgerald", "Gallagher",
    "Hawthorne", "Lindgren", "Montague", "Pemberton",
)  # fmt: skip
STREETS = (
    "Baker", "Elm", "Maple", "Oak", "Cedar", "Willow", "Highfield", "Kingsway", "Station",
    "Church", "Mill", "Victoria", "Park", "Orchard", "Riverside", "Beacon", "Harbour",
    "Chestnut", "Lancaster", "Primrose",
)  # fmt: skip
SUFFIXES = (
    "Street", "Road", "Avenue", "Lane", "Drive", "Close", "Terrace", "Way", "Court", "Place",
    "Crescent", "St", "Rd", "Ave", "Blvd",
)  # fmt: skip
GERMAN_STREETS = ("Haupt", "Bahnhof", "Linden", "Garten", "Schiller", "Goethe", "Berg")
FRENCH_STREETS = ("la Paix", "Rivoli", "la République", "Vaugirard", "Lafayette")
CITIES = ("London", "Leeds", "Boston", "Denver", "Berlin", "Paris", "Lyon", "Austin")
DOMAINS = ("example.org", "example.com", "mail.example.net", "example.co.uk", "test.example")
MONTHS = (
    "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November", "December",
)  # fmt: skip
TOPICS = (
    "a dinner for six", "a trip to Lisbon", "the season finale", "a gluten-free menu",
    "my train connections", "the new series", "a birthday cake", "a museum visit",
)  # fmt: skip
REPLIES = (
    "Happy to help with that.", "Let me look into it.", "Noted, thank you.",
    "Here is what I found.", "Of course.", "Thanks for the details.",
)  # fmt: skip

# A person's first mention: {P} is the full name. The last four have no cue.
NAME_FIRST = (
    "Hi, my name is {P} and I need help with {topic}.",
    "Hello! I'm {P}, planning {topic}.",
    "This is {P} again, about {topic}.",
    "My sister {P} recommended you for {topic}.",
    "Please book it under Ms {P}.",
    "Please put the order under Mr {P}, thanks.",
    "my name's {P}, can you help with {topic}?",
    "Call me {P}. I want {topic}.",
    "Yesterday {P} told me about {topic}.",
    "{P} asked me to sort out {topic}.",
    "I am writing on behalf of {P} about {topic}.",
    "Could you send {topic} ideas to {P} directly?",
)  # fmt: skip
# The same person again. {P} full name, {F} first name, {L} last name; {PU} and {FU} in
# capitals, {pl} the full name in lower case, {fl} the first name in lower case.
NAME_AGAIN_REPLY = (
    "Sure {P}! {reply}",
    "Thanks, {F}. {reply}",
    "Of course, {FU}, {reply}",
    "{F}'s request is noted. {reply}",
    "I have updated {L}'s booking. {reply}",
    "Welcome back, {PU}. {reply}",
    "Right away, {F} {L}. {reply}",
)  # fmt: skip
NAME_AGAIN_USER = (
    "Thanks! Please also copy {F} on it.",
    "It is for {P}'s family.",
    "sorry, {pl} here again.",
    "Put it under {L}, please.",
    "THIS IS FOR {PU}",
    "thanks, {fl} will be pleased",
)  # fmt: skip
NAME_AGAIN_LATER = (
    "Did {P}'s parcel arrive?",
    "Can you remind {F} about it?",
    "The same as last time for {P}, please.",
    "{L} said the last plan was great.",
)  # fmt: skip
NAME_AGAIN_QUESTIONNAIRE = (
    "The assistant kept calling me {F}, which felt odd.",
    "Helpful, though it spelled {P} wrong once.",
    "It remembered {F}'s preferences.",
    "Fine. ({PU})",
)  # fmt: skip
CONTEXTS = {
    "EMAIL_ADDRESS": (
        "You can reach me at {x}.", "my email is {x}", "Send the plan to {x} please.",
        "contact: <{x}>", "Is {x} the right address?",
    ),
    "PHONE_NUMBER": (
        "Call me on {x}.", "My number is {x}.", "text {x} if you are late",
        "phone: {x}", "You can ring {x} after six.",
    ),
    "STREET_ADDRESS": (
        "I live at {x}, {city}.", "Ship it to {x}, {city} please.", "My address is {x}.",
        "Deliver to {x}.", "We moved to {x} last year.",
    ),
    "DATE_OF_BIRTH": (
        "I was born on {x}.", "My date of birth is {x}.", "DOB: {x}", "My birthday is {x}.",
        "I was born in {city} on {x}.", "born {x}, if that matters", "I'm a {x} baby.",
    ),
    "PASSPORT": (
        "My passport number is {x}.", "Passport: {x}", "passport no. {x}",
        "The number on my passport is {x}.", "Here is my passport {x} for the booking.",
    ),
    "DRIVING_LICENCE": (
        "My driving licence number is {x}.", "Driver's license: {x}", "DL {x}",
        "licence no. {x}", "my drivers license is {x} if you need it",
    ),
    "NATIONAL_ID": (
        "My SSN is {x}.", "social security number {x}", "National insurance number: {x}",
        "my ID card number is {x}", "Tax ID {x}, for the invoice.",
    ),
    "IP_ADDRESS": (
        "My IP is {x}.", "the router at {x} keeps dropping", "I'm connecting from {x}.",
        "Block {x} please.", "Logs show {x} again.",
    ),
}  # fmt: skip
ECHOES = ("I have noted {x}.", "Confirmed: {x}.", "Thanks, {x} is on file.")


@dataclass
class _Text:
    """A text being written, with the spans of what was planted in it."""

    where: str
    parts: list[str] = field(default_factory=list)
    planted: list[dict[str, object]] = field(default_factory=list)

    def fill(
        self, template: str, values: dict[str, tuple[str, str | None]], person: str = ""
    ) -> None:
        """Append ``template`` with ``{name}`` replaced; a value with a kind is planted
        (a name with the ``person`` it names)."""
        rest = template
        while "{" in rest:
            before, _, tail = rest.partition("{")
            name, _, rest = tail.partition("}")
            self.parts.append(before)
            value, kind = values[name]
            if kind is not None:
                start = len("".join(self.parts))
                self.planted.append(
                    {"where": self.where, "start": start, "end": start + len(value),
                     "kind": kind, "value": value, **({"person": person} if person else {})}
                )  # fmt: skip
            self.parts.append(value)
        self.parts.append(rest)

    @property
    def text(self) -> str:
        return "".join(self.parts)


def _email(rng: random.Random, first: str, last: str) -> str:
    ascii_first = first.encode("ascii", "ignore").decode().lower() or "user"
    ascii_last = last.encode("ascii", "ignore").decode().lower().replace("'", "") or "x"
    local = rng.choice(
        (
            f"{ascii_first}.{ascii_last}",
            f"{ascii_first[0]}{ascii_last}{rng.randint(1, 99)}",
            f"{ascii_first}+orders",
            f"{ascii_last}_{ascii_first}",
        )
    )
    address = f"{local}@{rng.choice(DOMAINS)}"
    return address.upper() if rng.random() < 0.1 else address


def _digits(rng: random.Random, n: int) -> str:
    return "".join(str(rng.randint(0, 9)) for _ in range(n))


def _phone(rng: random.Random) -> str:
    d = _digits
    return rng.choice(
        (
            f"+44 20 7946 {d(rng, 4)}",
            f"({rng.randint(201, 989)}) {d(rng, 3)}-{d(rng, 4)}",
            f"{rng.randint(201, 989)}-{d(rng, 3)}-{d(rng, 4)}",
            f"+1 {rng.randint(201, 989)} {d(rng, 3)} {d(rng, 4)}",
            f"07700 {d(rng, 6)}",
            f"+49 30 {d(rng, 8)}",
            f"0161 496 {d(rng, 4)}",
            f"+33 1 {d(rng, 2)} {d(rng, 2)} {d(rng, 2)} {d(rng, 2)}",
            f"{rng.randint(201, 989)}.{d(rng, 3)}.{d(rng, 4)}",
            f"+41 44 {d(rng, 3)} {d(rng, 2)} {d(rng, 2)}",
        )
    )


def _street(rng: random.Random) -> str:
    style = rng.random()
    if style < 0.7:
        flat = f", Apt {rng.randint(1, 40)}" if rng.random() < 0.2 else ""
        letter = rng.choice(("", "", "", "B"))
        return f"{rng.randint(1, 2400)}{letter} {rng.choice(STREETS)} {rng.choice(SUFFIXES)}{flat}"
    if style < 0.85:
        return f"{rng.choice(GERMAN_STREETS)}straße {rng.randint(1, 120)}"
    return f"{rng.randint(1, 90)} rue de {rng.choice(FRENCH_STREETS)}"


def _date(rng: random.Random) -> str:
    year, month, day = rng.randint(1940, 2005), rng.randint(1, 12), rng.randint(1, 28)
    return rng.choice(
        (
            f"{day:02d}/{month:02d}/{year}",
            f"{year}-{month:02d}-{day:02d}",
            f"{day} {MONTHS[month - 1]} {year}",
            f"{MONTHS[month - 1]} {day}, {year}",
            f"{day}.{month:02d}.{year}",
        )
    )


def _letters(rng: random.Random, n: int) -> str:
    return "".join(rng.choice("ABCDEFGHJKLMNPRSTUVWXYZ") for _ in range(n))


def _passport(rng: random.Random) -> str:
    return rng.choice(
        (
            f"{_letters(rng, 1)}{_digits(rng, 7)}",
            f"{rng.randint(1, 9)}{_digits(rng, 8)}",
            f"{_letters(rng, 2)}{_digits(rng, 7)}",
        )
    )


def _licence(rng: random.Random, last: str) -> str:
    surname = (last.encode("ascii", "ignore").decode().upper().replace("'", "") + "99999")[:5]
    return rng.choice(
        (
            f"{surname}{_digits(rng, 6)}{_letters(rng, 2)}{rng.randint(1, 9)}{_letters(rng, 2)}",
            f"{_letters(rng, 1)}{_digits(rng, 3)}-{_digits(rng, 4)}-{_digits(rng, 4)}",
            f"{_letters(rng, 1)}{_digits(rng, 7)}",
        )
    )


def _national_id(rng: random.Random) -> str:
    style = rng.random()
    if style < 0.5:
        return f"{rng.randint(100, 665)}-{rng.randint(10, 99)}-{rng.randint(1000, 9999)}"
    if style < 0.8:
        prefix = rng.choice(("AB", "CE", "JH", "NP", "WR", "TZ"))
        groups = " ".join(_digits(rng, 2) for _ in range(3))
        return f"{prefix} {groups} {rng.choice('ABCD')}"
    return _digits(rng, 11)


def _ip(rng: random.Random) -> str:
    if rng.random() < 0.8:
        block = rng.choice(("192.0.2", "198.51.100", "203.0.113", f"10.{rng.randint(0, 255)}.7"))
        return f"{block}.{rng.randint(1, 254)}"
    groups = ":".join(f"{rng.randint(0, 0xFFFF):x}" for _ in range(4))
    return f"2001:db8:{groups}::{rng.randint(1, 0xFFF):x}"


_MAKERS = {
    "EMAIL_ADDRESS": lambda rng, first, last: _email(rng, first, last),
    "PHONE_NUMBER": lambda rng, first, last: _phone(rng),
    "STREET_ADDRESS": lambda rng, first, last: _street(rng),
    "DATE_OF_BIRTH": lambda rng, first, last: _date(rng),
    "PASSPORT": lambda rng, first, last: _passport(rng),
    "DRIVING_LICENCE": lambda rng, first, last: _licence(rng, last),
    "NATIONAL_ID": lambda rng, first, last: _national_id(rng),
    "IP_ADDRESS": lambda rng, first, last: _ip(rng),
}


def _people(rng: random.Random) -> list[tuple[str, str]]:
    pairs = sorted({(f, s) for f in FIRST_NAMES for s in SURNAMES})
    return rng.sample(pairs, SESSIONS)


def _name_values(first: str, last: str) -> dict[str, tuple[str, str | None]]:
    full = f"{first} {last}"
    recurrence = "NAME_RECURRENCE"
    return {
        "P": (full, recurrence),
        "F": (first, recurrence),
        "L": (last, recurrence),
        "PU": (full.upper(), recurrence),
        "FU": (first.upper(), recurrence),
        "pl": (full.lower(), recurrence),
        "fl": (first.lower(), recurrence),
    }


def _turn(turns: list[tuple[_Text, _Text]]) -> tuple[_Text, _Text]:
    """A new turn at the end of ``turns``."""
    index = len(turns)
    pair = (_Text(f"turns/{index}/user"), _Text(f"turns/{index}/response"))
    turns.append(pair)
    return pair


def sessions() -> Iterator[dict[str, object]]:
    """The corpus, session by session (the same every time)."""
    rng = random.Random(SEED)
    people = _people(rng)
    for number, (first, last) in enumerate(people):
        turns: list[tuple[_Text, _Text]] = []

        common = {"topic": (rng.choice(TOPICS), None), "reply": (rng.choice(REPLIES), None)}
        names = _name_values(first, last)
        person = f"{first} {last}"
        user, reply = _turn(turns)
        user.fill(rng.choice(NAME_FIRST), {**common, "P": (person, "NAME")}, person)
        reply.fill(rng.choice(NAME_AGAIN_REPLY), {**common, **names}, person)
        for kind in sorted(rng.sample(sorted(_MAKERS), 6)):
            value = _MAKERS[kind](rng, first, last)
            user, reply = _turn(turns)
            context = {"x": (value, kind), "city": (rng.choice(CITIES), None)}
            user.fill(rng.choice(CONTEXTS[kind]), context)
            if rng.random() < 0.4:
                echoed = value.upper() if rng.random() < 0.3 else value
                reply.fill(rng.choice(ECHOES), {"x": (echoed, kind)})
            else:
                reply.fill(rng.choice(REPLIES), {})
        user, reply = _turn(turns)
        user.fill(rng.choice(NAME_AGAIN_USER), names, person)
        reply.fill(rng.choice(NAME_AGAIN_REPLY), {**common, **names}, person)
        if number >= 1 and rng.random() < 0.5:
            earlier_first, earlier_last = people[rng.randint(max(0, number - 5), number - 1)]
            user, reply = _turn(turns)
            earlier = _name_values(earlier_first, earlier_last)
            user.fill(rng.choice(NAME_AGAIN_LATER), earlier, f"{earlier_first} {earlier_last}")
            reply.fill(rng.choice(REPLIES), {})
        questionnaire = _Text("questionnaire")
        questionnaire.fill(rng.choice(NAME_AGAIN_QUESTIONNAIRE), names, person)
        texts = [text for pair in turns for text in pair] + [questionnaire]
        yield {
            "session": f"c{number:04d}",
            "turns": [{"user": u.text, "response": r.text} for u, r in turns],
            "questionnaire": questionnaire.text,
            "planted": [span for text in texts for span in text.planted],
        }


def load(path: Path = CORPUS) -> list[dict[str, object]]:
    """The committed corpus."""
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


def main() -> None:
    with CORPUS.open("w", encoding="utf-8") as handle:
        for session in sessions():
            handle.write(json.dumps(session, ensure_ascii=False) + "\n")
    print(f"wrote {CORPUS}")


if __name__ == "__main__":
    main()
