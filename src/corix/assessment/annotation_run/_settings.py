"""An annotation job's settings as the record stored with its run when the job starts."""

from __future__ import annotations

from corix.assessment.annotation_run._job import AnnotationJob
from corix.assessment.annotators import PROMPT_VERSION, AnnotatorKind
from corix.domain import AnnotationJobSettings, EndpointIdentity, public_url
from corix.llm import EndpointConfig


def job_settings(
    job: AnnotationJob, asked: str, endpoint: EndpointConfig | None
) -> AnnotationJobSettings:
    """What ``job`` asks of the annotator registered as ``asked``, calling ``endpoint``."""
    options, annotator = job.options, job.annotator
    return AnnotationJobSettings(
        annotator=asked,
        stored_as=annotator.name,
        kind=annotator.kind.value,
        passes=options.passes,
        repeats=options.repeats,
        adaptive=options.adaptive,
        min_repeats=options.min_repeats if options.adaptive else None,
        max_flip_rate=options.max_flip_rate if options.adaptive else None,
        max_change=options.max_change if options.adaptive else None,
        judge_noise=options.judge_noise if options.adaptive else None,
        categories=tuple(job.categories),
        harms=tuple(job.harms),
        schema_version=f"{job.schema.id}-{job.schema.version}",
        harm_pack_versions={harm: job.packs[harm].version for harm in job.harms},
        prompt_version=PROMPT_VERSION if annotator.kind is AnnotatorKind.LLM else None,
        seed=options.seed,
        temperature=options.temperature,
        max_reasks=options.max_reasks,
        endpoint=None if endpoint is None else _identity(endpoint),
    )


def _identity(endpoint: EndpointConfig) -> EndpointIdentity:
    return EndpointIdentity(
        name=endpoint.name,
        transport=endpoint.transport,
        base_url=public_url(endpoint.base_url),
        model=endpoint.model,
        structured_output=endpoint.structured_output,
        context_window=endpoint.context_window,
        max_tokens=endpoint.max_tokens,
        temperature=endpoint.temperature,
        timeout_s=endpoint.timeout_s,
        price_per_1k_prompt=endpoint.price_per_1k_prompt,
        price_per_1k_completion=endpoint.price_per_1k_completion,
    )
