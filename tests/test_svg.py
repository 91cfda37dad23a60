"""The board drawing (bgai.formats.svg.board_svg): what it shows, from whose side, and the parts a page can click."""

from __future__ import annotations

import re

import pytest

from bgai import Position
from bgai.formats.svg import board_svg

# X on roll: 5 on the 6, 3 on the 8, 2 on the bar; O: 2 on X's ace point, 5 on X's 19.
POS = Position.from_points({6: 5, 8: 3, "bar": 2}, {1: 2, 19: 5})


def checkers(svg: str, side: str) -> list[str]:
    """data-point of each drawn checker of a side ("bottom" or "top")."""
    return re.findall(rf'class="checker {side}" data-point="([^"]+)"', svg)


def test_the_player_on_roll_is_drawn_at_the_bottom_with_its_numbering():
    svg = board_svg(POS)
    assert sorted(checkers(svg, "bottom")) == sorted(["6"] * 5 + ["8"] * 3 + ["bar"] * 2)
    assert sorted(checkers(svg, "top")) == sorted(["1"] * 2 + ["19"] * 5)
    assert re.search(r'class="pips bottom"[^>]*>104<', svg) and re.search(r'class="pips top"[^>]*>78<', svg)


def test_the_opponent_may_be_drawn_at_the_bottom_instead():
    svg = board_svg(POS, bottom="opponent", dice=(3, 1))
    assert sorted(checkers(svg, "bottom")) == sorted(["24"] * 2 + ["6"] * 5)  # O's own numbering
    assert sorted(checkers(svg, "top")) == sorted(["19"] * 5 + ["17"] * 3 + ["top-bar"] * 2)
    assert 'data-roller="top"' in svg  # the dice are the player on roll's, now at the top


def test_the_cube_sits_with_its_owner_and_a_centered_cube_shows_64():
    assert 'data-owner="center"' in board_svg(POS) and ">64</text>" in board_svg(POS)
    assert 'data-owner="bottom"' in board_svg(POS, cube=2, cube_owner="me")
    assert 'data-owner="top"' in board_svg(POS, cube=2, cube_owner="me", bottom="opponent")
    assert 'class="cube"' not in board_svg(POS, cube_owner=None)
    with pytest.raises(ValueError, match="cube_owner"):
        board_svg(POS, cube_owner="bottom")


def test_dice_already_played_are_faded():
    svg = board_svg(POS, dice=(4, 4), dice_left=(4,))
    assert svg.count('class="die used"') == 3 and svg.count('class="die"') == 1


def test_click_areas_and_landing_marks_only_for_a_page():
    assert 'class="hit"' not in board_svg(POS)
    page = board_svg(POS, interactive=True)
    assert page.count('class="hit"') == 26 and page.count('class="landing"') == 25
    assert 'data-point="bar"' in page and 'data-point="off"' in page


def test_the_last_play_is_marked_where_checkers_left_and_landed():
    svg = board_svg(POS, last_move=[(24, 18)], last_mover="opponent")
    assert svg.count('stroke-dasharray') == 1 and svg.count('class="mark"') == 2


def test_a_position_draws_itself_in_notebooks():
    assert Position.start()._repr_svg_().startswith("<svg")


def test_the_opponents_roll_just_played_is_drawn_on_its_side():
    svg = board_svg(Position.start(), dice=(5, 3), dice_roller="opponent")
    assert 'data-roller="top"' in svg and 'data-roller="bottom"' not in svg
    with pytest.raises(ValueError, match="dice_roller"):
        board_svg(Position.start(), dice=(5, 3), dice_roller="nobody")
