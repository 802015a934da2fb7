"""Grouping screen fixtures by source and choosing the held-out groups (issue #26)."""

from __future__ import annotations

import pytest

from tests.support.screen_groups import Member, grouped, held_out, keys, scene


@pytest.mark.parametrize("stem, want", [
    ("busy__streaming", "streaming"),
    ("busy__streaming_v2_1_332_w200", "streaming"),
    ("idle__empty_prompt_80x24_v0_21_10_w80", "empty_prompt"),
    ("rate_limit__session_limit_reset_time_v2_1_332_tz_berlin", "session_limit_reset_time"),
    ("busy__stalled_stream_20s", "stalled_stream"),
    ("connection_lost__stalled_stream_90s_v2_1_332", "stalled_stream"),
    ("connection_lost__429_retrying_late_attempt_v2_1_120_w80", "429_retrying"),
    ("busy__429_bare_hidden_retry_5min", "429_bare_hidden_retry"),
    ("picker__trust_folder_first_start_v1_0_50_w80", "trust_folder"),
    ("crashed__first_run_preflight_offline_dead_v2_1_120_w200", "first_run_preflight_offline"),
    ("connection_lost__http_500_final", "http_500_final"),      # a status code stays
])
def test_the_scene_drops_version_width_zone_and_time(stem: str, want: str) -> None:
    assert scene(stem) == want


def test_a_reported_screen_is_grouped_by_its_thread() -> None:
    one = keys("reported/codex/a__x", {"source": "https://github.com/o/r/issues/7#issuecomment-1"})
    two = keys("reported/codex/b__y", {"source": "https://github.com/o/r/issues/7 (second paste)"})
    assert one == two == ("report:https://github.com/o/r/issues/7",)


def test_captured_scenes_and_sessions_join_through_shared_keys() -> None:
    members = [
        Member("copilot/picker__trust_folder", "picker",
               keys("copilot/picker__trust_folder", {"provider": "copilot"})),
        Member("copilot/picker__trust_folder_first_start_v1_0_50_w80", "picker",
               keys("copilot/picker__trust_folder_first_start_v1_0_50_w80",
                    {"provider": "copilot", "source": "copilot 1.0.50 (old set), …"})),
        Member("copilot/login_required__x_v1_0_50_w80", "login_required",
               keys("copilot/login_required__x_v1_0_50_w80",
                    {"provider": "copilot", "source": "copilot 1.0.50 (old set), …"})),
        Member("copilot/idle__other", "idle", keys("copilot/idle__other", {"group": "g"})),
        Member("copilot/idle__another", "idle", keys("copilot/idle__another", {"group": "g"})),
        Member("copilot/busy__alone", "busy", keys("copilot/busy__alone", {})),
    ]
    sizes = sorted(len(g) for g in grouped(members).values())
    assert sizes == [1, 2, 3]


def _groups(n: int, folder: str = "p") -> dict[str, list[Member]]:
    states = ("busy", "idle", "rate_limit", "crashed")
    return {f"{folder}:{k}": [Member(f"{folder}/{states[k % 4]}__s{k}", states[k % 4],
                                     (f"{folder}:{k}",))] for k in range(n)}


def test_about_30_percent_of_the_groups_of_a_folder_are_held_out_per_label() -> None:
    groups = _groups(40)
    out = held_out(groups, seed=26)
    assert 11 <= len(out) <= 13
    for state in ("busy", "idle", "rate_limit", "crashed"):
        assert 2 <= sum(groups[n][0].state == state for n in out) <= 4


def test_the_choice_is_seeded_and_a_label_with_two_groups_gets_one_held_out() -> None:
    groups = {**_groups(20), "q:0": [Member("q/exited__a", "exited", ("q:0",))],
              "r:0": [Member("r/exited__b", "exited", ("r:0",))]}
    assert held_out(groups, seed=26) == held_out(groups, seed=26)
    assert held_out(groups, seed=26) != held_out(groups, seed=27)
    assert {"q:0", "r:0"} & held_out(groups, seed=26)
