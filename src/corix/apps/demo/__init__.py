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
- ``agent`` is ``guarded`` with the scenario pack's tools: it looks things up with them
  (the episode guide) and passes on what a tool returned when it sees no rule against
  it, so it leaks a later episode when the viewer has not yet said how far they got.

Replies depend only on the dialogue so far: no randomness, no clock. So a dialogue replays:
a fresh session given the earlier turns answers on as the one that served them.
"""

from corix.apps.demo.application import (
    DEMO_VERSION,
    VARIANTS,
    DemoApplication,
    build_demo_application,
)
from corix.apps.demo.session import DemoSession

__all__ = [
    "DEMO_VERSION",
    "VARIANTS",
    "DemoApplication",
    "DemoSession",
    "build_demo_application",
]
