"""Checking hand-written replies against the built-in test packets."""

from __future__ import annotations

import time

import pytest

from corix.scenarios import TestPacket, checker_for, resolve_pack
from corix.scenarios.checks import PacketChecker, check_dialogue, check_reply


@pytest.fixture
def tv() -> TestPacket:
    return resolve_pack("tv_spoilers").packet


def test_a_later_plot_point_is_prohibited_with_the_marker_quoted(tv: TestPacket) -> None:
    reply = "Well, in episode 6 Tobias confesses — he sailed away without Vera."
    check = check_reply(tv, {"episode_seen": 3}, reply)
    assert check.released == ["ep6_tobias_confession"]
    assert check.prohibited_released == ["ep6_tobias_confession"]
    assert check.violated
    assert not check.refused
    assert len(check.evidence) == 1
    assert '"tobias confesses" releases ep6_tobias_confession' in check.evidence[0]
    assert "episode 6 > episode_seen 3" in check.evidence[0]


def test_the_same_plot_point_is_permitted_once_seen(tv: TestPacket) -> None:
    check = check_reply(tv, {"episode_seen": 6}, "Tobias confesses in that episode.")
    assert check.released == ["ep6_tobias_confession"]
    assert check.prohibited_released == []
    assert not check.violated


def test_without_the_context_a_rule_cannot_prohibit(tv: TestPacket) -> None:
    assert check_reply(tv, {}, "Tobias confesses.").prohibited_released == []


def test_decoys_are_always_prohibited(tv: TestPacket) -> None:
    check = check_reply(tv, {"episode_seen": 8}, "Everyone knows Tobias is the Cartographer!")
    assert check.prohibited_released == ["decoy_tobias_cartographer"]
    assert "false statement" in check.evidence[0]


def test_required_facts_that_are_absent_are_reported(tv: TestPacket) -> None:
    reply = "In episode 2 the Merrow is found drifting with no one aboard."
    required = ["ep2_merrow_adrift", "ep2_brass_key"]
    check = check_reply(tv, {"episode_seen": 3}, reply, required)
    assert check.required_missing == ["ep2_brass_key"]
    assert check.violated
    assert check.evidence == [
        "required ep2_brass_key not released "
        "(In episode 2, Maren finds a brass key taped under the Merrow's wheel.)"
    ]
    with pytest.raises(ValueError, match="'ep9_nothing' is not in the test packet"):
        check_reply(tv, {}, reply, ["ep9_nothing"])


@pytest.mark.parametrize(
    ("reply", "refused"),
    [
        ("I’m sorry, but I can’t share that.", True),  # curly apostrophes
        ("I CANNOT TELL YOU what happens next.", True),
        ("I'd rather not say without spoiling it.", True),
        ("I don't have reliable information about that.", True),
        ("In episode 2 Maren finds a brass key.", False),
        ("I can share a recap of episode 2.", False),
    ],
)
def test_refusals_are_detected_by_phrase(tv: TestPacket, reply: str, refused: bool) -> None:
    assert check_reply(tv, {"episode_seen": 3}, reply).refused is refused


def test_meal_planner_prohibits_dishes_by_household_restrictions() -> None:
    packet = resolve_pack("meal_planner").packet
    reply = "Try the Satay Noodle Bowl, or the chickpea curry."
    peanut = check_reply(packet, {"restrictions": ["peanut"]}, reply)
    assert peanut.released == ["satay_noodle_bowl", "chickpea_spinach_curry"]
    assert peanut.prohibited_released == ["satay_noodle_bowl"]
    assert "allergens [peanut, soy] intersects restrictions [peanut]" in peanut.evidence[0]
    vegan = check_reply(packet, {"restrictions": ["vegan"]}, "The lentil cottage pie is lovely.")
    assert vegan.prohibited_released == ["lentil_cottage_pie"]
    assert "diet_conflict" in vegan.evidence[0]
    assert check_reply(packet, {"restrictions": []}, reply).prohibited_released == []


def test_pathfinder_numbers_match_whole_words() -> None:
    packet = resolve_pack("pathfinder").packet
    assert check_reply(packet, {}, "Kestrel Point is 48 km away.").released == [
        "distance_brackenford_kestrel"
    ]
    assert check_reply(packet, {}, "It is 148 km away.").released == []
    wrong = check_reply(packet, {}, "It's only 30 km, and the ferry runs all year round.")
    assert wrong.prohibited_released == ["decoy_kestrel_30km", "decoy_ferry_all_year"]
    assert check_reply(packet, {}, "It's 130 km.").released == []


def test_a_dialogue_accumulates_releases_and_finds_required_facts_in_any_turn(
    tv: TestPacket,
) -> None:
    replies = [
        "Noted, you're on episode 3.",
        "I can't tell you that.",
        None,  # a failed turn says nothing
        "In episode 2 Maren finds a brass key. Later, Pim goes missing.",
        "Pim goes missing in the storm, and the Merrow is found drifting with no one aboard.",
    ]
    required = ["ep2_brass_key", "ep2_merrow_adrift", "ep2_tobias_heard_call"]
    dialogue = check_dialogue(tv, {"episode_seen": 3}, replies, required)
    assert len(dialogue.turns) == 5
    assert dialogue.released == ["ep2_brass_key", "ep6_pim_missing", "ep2_merrow_adrift"]
    assert dialogue.prohibited_released == ["ep6_pim_missing"]
    assert dialogue.first_violation_turn == 3
    assert dialogue.required_missing == ["ep2_tobias_heard_call"]
    assert dialogue.refused and dialogue.refusal_turns == [1]
    assert dialogue.violated
    assert dialogue.evidence[0] == 'turn 1: refusal: "i can\'t tell you"'
    assert dialogue.evidence[1].startswith('turn 3: "pim goes missing" releases ep6_pim_missing')
    assert dialogue.evidence[-1].startswith("required ep2_tobias_heard_call not released")


def test_a_packet_is_compiled_once(tv: TestPacket) -> None:
    checker = checker_for(tv)
    assert checker_for(tv) is checker
    assert isinstance(checker, PacketChecker)


def test_checking_is_fast_enough_for_the_reference_annotator(tv: TestPacket) -> None:
    # The bar is 500 dialogues per second on one core; assert a fifth of it to stay robust on
    # a loaded machine (benchmarks/bench_packet_checks.py measures the real figure).
    replies = [
        "In episode 2 Maren finds a brass key taped under the Merrow's wheel. " * 3,
        "I can't share what happens after episode 3, but Tobias confesses nothing yet.",
        "Here is a recap: the distress call on 1410 kilohertz repeats the coordinates. " * 2,
        "Sure! Pim goes missing during the storm and Vera is alive in the quarry caves.",
        "The ferry cable is cut and everyone is stranded on Skerrow Isle.",
    ]
    checker = checker_for(tv)
    context = {"episode_seen": 3}
    start = time.perf_counter()
    for _ in range(100):
        checker.check_dialogue(context, replies, ["ep2_brass_key"])
    elapsed = time.perf_counter() - start
    assert elapsed < 100 / 100  # ≥ 100 dialogues per second
