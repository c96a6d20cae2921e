"""What each cell's numbers cost: its dialogues, and the model calls, tokens and price of
each source of calls — the application, the simulated users, the judges.

Per application × scenario × level of the measured runs:

* **application**: one call per stored turn, with the tokens the application reported,
  at the prices the run's plan gives the application (``price_per_1k_prompt`` /
  ``price_per_1k_completion`` per 1,000 tokens, or their short names, in its spec or
  options, as the ``openai:`` adapter reads them);
* **simulator**: the simulated users' calls stored with each session (none where a
  script or a person played the user), at the prices of the level's ``simulator``
  endpoint in the plan;
* **judge**: the calls of every LLM annotator's passes on the cell's dialogues, at the
  prices its annotation jobs were started with (``corix annotate --price-prompt``);
  rules and people make no model calls.

A source with calls but no price costs ``None``, not 0: its price is unknown, not free;
so does one whose calls were not recorded (sessions or passes stored before corix
recorded them), and then its counts are ``None`` too. A total is ``None`` when a part is.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from pydantic import BaseModel

from corix.apps import spec_prices
from corix.domain import EndpointConfig, EndpointIdentity, Level, Plan, RunPlan
from corix.storage import CallCount, Database, annotation_jobs, cell_usage, get_run

__all__ = ["CellCost", "SourceCost", "cell_costs"]

Prices = tuple[float, float]
"""(prompt, completion) per 1,000 tokens."""


class SourceCost(BaseModel):
    """One source's calls, tokens and cost (``None``: not known)."""

    calls: int | None
    prompt_tokens: int | None
    completion_tokens: int | None
    cost: float | None


class CellCost(BaseModel):
    """One cell's usage over the measured runs, by source, and its cost at the prices."""

    group: dict[str, str]
    dialogues: int
    application: SourceCost
    simulator: SourceCost
    judge: SourceCost
    total: SourceCost


def cell_costs(db: Database, run_ids: Sequence[str]) -> list[CellCost]:
    """Usage and cost per application × scenario × level, summed over ``run_ids``."""
    runs = list(dict.fromkeys(run_ids))
    plans = {run_id: get_run(db, run_id).plan for run_id in runs}
    judge_prices = _judge_prices(db, runs)
    dialogues: dict[tuple[str, str, str], int] = {}
    parts: dict[tuple[str, str, str], list[tuple[SourceCost, SourceCost, SourceCost]]] = {}
    for usage in cell_usage(db, runs):
        key = (usage.application, usage.scenario, usage.level)
        plan = plans[usage.run_id]
        application = _priced(
            CallCount(usage.calls, usage.prompt_tokens, usage.completion_tokens),
            _application_prices(plan).get(usage.application),
        )
        simulator = _priced(usage.simulator, _simulator_prices(plan, usage.level))
        judge = _sum(
            _priced(count, judge_prices.get((usage.run_id, name)))
            for name, count in usage.judges.items()
        )
        dialogues[key] = dialogues.get(key, 0) + usage.dialogues
        parts.setdefault(key, []).append((application, simulator, judge))
    found = []
    for key in sorted(parts):
        application, simulator, judge = (_sum(column) for column in zip(*parts[key], strict=True))
        found.append(
            CellCost(
                group={"application": key[0], "scenario": key[1], "level": key[2]},
                dialogues=dialogues[key],
                application=application,
                simulator=simulator,
                judge=judge,
                total=_sum((application, simulator, judge)),
            )
        )
    return found


def _priced(count: CallCount | None, prices: Prices | None) -> SourceCost:
    if count is None:
        return SourceCost(calls=None, prompt_tokens=None, completion_tokens=None, cost=None)
    if count.calls == 0:
        cost: float | None = 0.0
    elif prices is None:
        cost = None
    else:
        cost = (count.prompt_tokens * prices[0] + count.completion_tokens * prices[1]) / 1000
    return SourceCost(
        calls=count.calls,
        prompt_tokens=count.prompt_tokens,
        completion_tokens=count.completion_tokens,
        cost=cost,
    )


def _sum(costs: Iterable[SourceCost]) -> SourceCost:
    """The sum of ``costs``, each field ``None`` where any part's is (none: all zero)."""
    listed = list(costs)

    def total(name: str) -> Any:
        values = [getattr(cost, name) for cost in listed]
        return None if any(value is None for value in values) else sum(values)

    return SourceCost(
        calls=total("calls"),
        prompt_tokens=total("prompt_tokens"),
        completion_tokens=total("completion_tokens"),
        cost=None if total("cost") is None else float(total("cost")),
    )


def _application_prices(plan: RunPlan) -> dict[str, Prices]:
    """application → its prices, where the plan gives them (a run of people has none)."""
    found = {}
    for entry in plan.applications if isinstance(plan, Plan) else ():
        prices = spec_prices(entry.spec, entry.options)
        if prices is not None:
            found[entry.name] = prices
    return found


def _simulator_prices(plan: RunPlan, level: str) -> Prices | None:
    settings = plan.levels.get(Level(level)) if isinstance(plan, Plan) else None
    if settings is None or settings.simulator is None:
        return None
    return _endpoint_prices(settings.simulator)


def _endpoint_prices(endpoint: EndpointConfig | EndpointIdentity) -> Prices | None:
    prompt, completion = endpoint.price_per_1k_prompt, endpoint.price_per_1k_completion
    if prompt is None and completion is None:
        return None
    return float(prompt or 0), float(completion or 0)


def _judge_prices(db: Database, run_ids: Sequence[str]) -> dict[tuple[str, str], Prices]:
    """(run, annotator) → the prices its jobs were started with, where every job of it
    gave the same ones (jobs at different prices leave its passes' price unknown)."""
    given: dict[tuple[str, str], set[Prices | None]] = {}
    for job in annotation_jobs(db, run_ids):
        endpoint = job.settings.endpoint
        prices = None if endpoint is None else _endpoint_prices(endpoint)
        given.setdefault((job.run_id, job.settings.stored_as), set()).add(prices)
    found = {}
    for key, options in given.items():
        (prices,) = options if len(options) == 1 else (None,)
        if prices is not None:
            found[key] = prices
    return found
