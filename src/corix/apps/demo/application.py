"""The demo application: one variant over a set of scenario packs, and its factory."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from corix.apps.base import Application
from corix.apps.demo.agent import AgentSession
from corix.apps.demo.knowledge import Knowledge
from corix.apps.demo.session import DemoSession
from corix.errors import unknown_name
from corix.scenarios import ScenarioPack, list_builtin_packs, resolve_pack

VARIANTS = ("guarded", "unguarded", "hostile", "agent")
DEMO_VERSION = "1.0"


class DemoApplication(Application):
    """A scenario-aware demo assistant; ``packs`` defaults to every built-in pack."""

    def __init__(self, variant: str = "guarded", packs: Sequence[ScenarioPack] | None = None):
        if variant not in VARIANTS:
            raise unknown_name("demo variant", variant, VARIANTS)
        self.variant = variant
        chosen = (
            list(packs) if packs is not None else [resolve_pack(n) for n in list_builtin_packs()]
        )
        self._knowledge = [Knowledge(pack) for pack in chosen]

    async def open(self, auth: Mapping[str, str] | None = None) -> None:
        """Nothing to connect to."""

    async def version(self) -> str:
        packs = ", ".join(f"{k.pack.name} {k.pack.version}" for k in self._knowledge)
        return f"corix-demo {DEMO_VERSION} ({self.variant}; {packs})"

    async def start_session(self) -> DemoSession:
        if self.variant == "agent":
            return AgentSession(self._knowledge, "guarded")
        return DemoSession(self._knowledge, self.variant)


def build_demo_application(variant: str) -> DemoApplication:
    """The demo application ``variant`` (guarded, unguarded or hostile) over the built-in packs."""
    return DemoApplication(variant)
