"""A scripted test's work-item payload is ``ModelTestSpec``'s JSON form, built without it."""

from __future__ import annotations

import datetime

from corix.levels.model_testing import ModelTestSpec, spec_payload
from corix.scenarios import expand_model_tests, resolve_pack


def test_payload_is_the_specs_json_form() -> None:
    tests = [
        test
        for name in ("tv_spoilers", "meal_planner")
        for test in expand_model_tests(resolve_pack(name))
    ]
    odd = tests[0].model_copy(
        update={"parameters": {"when": datetime.date(2026, 11, 29), "pair": (1, "a"), "x": 1.5}}
    )
    for test in [*tests, odd]:
        spec = ModelTestSpec(
            turns=tuple(test.turns),
            parameters=dict(test.parameters),
            template=test.template,
            template_version=test.template_version,
            probe=test.probe,
            required_facts=tuple(test.required_facts),
        )
        assert spec_payload(test) == spec.model_dump(mode="json")
        assert ModelTestSpec.model_validate(spec_payload(test)) == ModelTestSpec.model_validate(
            spec.model_dump(mode="json")
        )
    assert spec_payload(odd)["parameters"] == {"when": "2026-11-29", "pair": [1, "a"], "x": 1.5}
