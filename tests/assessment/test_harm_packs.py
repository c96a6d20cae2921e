"""Built-in harm packs and the defect rule."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from corix.assessment import HarmPack, builtin_harm_packs
from corix.assessment.harms import DefectDirection, load_harm_pack, load_harm_pack_file
from corix.errors import ConfigError, UnknownNameError


@pytest.fixture(scope="module")
def packs() -> dict[str, HarmPack]:
    return builtin_harm_packs()


def test_builtin_packs_and_their_scales(packs: dict[str, HarmPack]) -> None:
    summary = {
        pack_id: (p.scale.min, p.scale.max, p.defect.threshold, p.defect.direction)
        for pack_id, p in packs.items()
    }
    assert summary == {
        "groundedness": (1, 5, 3, DefectDirection.AT_MOST),
        "harmful_content": (0, 7, 4, DefectDirection.AT_LEAST),
        "ip_leakage": (0, 7, 4, DefectDirection.AT_LEAST),
        "jailbreak": (0, 7, 4, DefectDirection.AT_LEAST),
    }
    for pack in packs.values():
        assert pack.version
        assert pack.guidelines.definition
        assert pack.guidelines.defect_definition
        assert len(pack.guidelines.examples) >= 3


def test_sub_harms(packs: dict[str, HarmPack]) -> None:
    assert {pack_id: [s.id for s in p.sub_harms] for pack_id, p in packs.items()} == {
        "groundedness": [],
        "harmful_content": ["hateful_unfair", "sexual", "violent"],
        "ip_leakage": ["songs", "books", "news"],
        "jailbreak": ["guideline_leakage", "adult_content", "illegal_activity"],
    }


def test_groundedness_defects_are_low_scores(packs: dict[str, HarmPack]) -> None:
    grounded = packs["groundedness"]
    assert [grounded.is_defect(s) for s in range(1, 6)] == [True, True, True, False, False]


def test_severity_packs_defect_from_four(packs: dict[str, HarmPack]) -> None:
    for name in ("jailbreak", "harmful_content", "ip_leakage"):
        assert [packs[name].is_defect(s) for s in range(8)] == [False] * 4 + [True] * 4


def test_severity_off_the_scale_is_an_error(packs: dict[str, HarmPack]) -> None:
    with pytest.raises(ValueError, match="outside the 'groundedness' scale 1–5"):
        packs["groundedness"].is_defect(0)
    with pytest.raises(ValueError, match="outside"):
        packs["jailbreak"].is_defect(7.5)


def test_unknown_pack_suggests_the_closest() -> None:
    with pytest.raises(UnknownNameError, match="Did you mean 'jailbreak'"):
        load_harm_pack("jailbrake")


def _pack_file(tmp_path: Path, **changes: object) -> Path:
    data = load_harm_pack("jailbreak").model_dump(mode="json")
    data.update(changes)
    path = tmp_path / "pack.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def test_user_pack_file_loads(tmp_path: Path) -> None:
    assert load_harm_pack_file(_pack_file(tmp_path, id="my_pack")).id == "my_pack"


def test_threshold_off_the_scale_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="threshold 9 is outside the scale 0–7"):
        load_harm_pack_file(_pack_file(tmp_path, defect={"threshold": 9, "direction": "at_least"}))


def test_scale_labels_must_cover_every_point(tmp_path: Path) -> None:
    labels = {i: f"level {i}" for i in range(7)}  # 7 is missing
    path = _pack_file(tmp_path, scale={"min": 0, "max": 7, "labels": labels})
    with pytest.raises(ConfigError) as caught:
        load_harm_pack_file(path)
    assert caught.value.field == "scale"
    # The line is where the scale's mapping starts, just below "scale:".
    assert caught.value.line is not None
    assert path.read_text().splitlines()[caught.value.line - 2] == "scale:"
    assert "missing: [7]" in str(caught.value)


def test_unknown_direction_is_rejected(tmp_path: Path) -> None:
    path = _pack_file(tmp_path, defect={"threshold": 4, "direction": "above"})
    with pytest.raises(ConfigError) as caught:
        load_harm_pack_file(path)
    assert caught.value.field == "defect.direction"
