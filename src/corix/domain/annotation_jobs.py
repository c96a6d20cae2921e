"""The settings of an annotation job, stored with the run when the job starts.

``corix annotate`` (and the web's machine annotation) asks an annotator about a run's
sessions with options that otherwise live only on a command line: how many passes and
repeats, which targets, which guidelines, which endpoint and how it is asked. Stored with
the run, they name what made its annotations long after the command is gone.
"""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

from pydantic import BaseModel, ConfigDict, Field


def public_url(url: str) -> str:
    """``url`` without what may be secret: credentials, query and fragment."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


class EndpointIdentity(BaseModel):
    """Which model endpoint a job called and how: never its key, headers or credentials."""

    model_config = ConfigDict(frozen=True)

    name: str
    transport: str
    base_url: str = Field(description="without credentials, query or fragment")
    model: str
    structured_output: str
    context_window: int | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    timeout_s: float
    price_per_1k_prompt: float | None = None
    """Prices as the endpoint was given them (``None``: unknown): what a cell's judge
    calls cost (:mod:`corix.measurement.sizing.cell_cost`)."""
    price_per_1k_completion: float | None = None


class AnnotationJobSettings(BaseModel):
    """What one invocation asked of an annotator over a run."""

    model_config = ConfigDict(frozen=True)

    annotator: str = Field(description="the registered name asked for, e.g. 'llm'")
    stored_as: str = Field(description="the name its passes are stored under, e.g. 'llm:m'")
    kind: str
    passes: int
    repeats: int
    adaptive: bool
    min_repeats: int | None = Field(default=None, description="adaptive repeats only")
    max_flip_rate: float | None = Field(default=None, description="adaptive repeats only")
    max_change: float | None = Field(
        default=None, description="adaptive repeats only: the stopping rule's bound"
    )
    judge_noise: float | None = Field(
        default=None, description="adaptive repeats only: the judge noise it guards against"
    )
    categories: tuple[str, ...] = Field(description="annotation-schema categories asked")
    harms: tuple[str, ...] = Field(description="harm packs judged")
    schema_version: str = Field(description="the annotation schema, as id-version")
    harm_pack_versions: dict[str, str] = Field(description="each judged harm pack's version")
    prompt_version: str | None = Field(default=None, description="LLM annotators' prompts")
    seed: int
    temperature: float | None = None
    max_reasks: int
    endpoint: EndpointIdentity | None = None
