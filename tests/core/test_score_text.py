"""The one number formatter of the outputs (controller.core.view.score_text): the pulka
report's two decimals and the board's shortest form, a Fraction as its FORMATS.md number."""

from fractions import Fraction

import pytest

from controller.core.view import score_text


@pytest.mark.parametrize("value, places, text", [
    (6, None, "6"), (6.0, None, "6"), (2.5, None, "2.5"), (-3, None, "-3"),
    (Fraction(1, 3), None, "0.333333"), (Fraction(20, 4), None, "5"),
    (6, 2, "6"), (6.0, 2, "6"), (2.5, 2, "2.5"), (-12.3333, 2, "-12.33"), (0.1 + 0.2, 2, "0.3"),
    (Fraction(-37, 3), 2, "-12.33"),
])
def test_a_score_is_written_as_players_write_it(value, places, text):
    assert score_text(value, places) == text


def test_the_report_and_the_board_differ_only_in_their_decimals():
    assert score_text(100 / 3, 2) == "33.33" and score_text(100 / 3) == "33.3333"
