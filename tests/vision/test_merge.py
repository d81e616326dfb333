"""One reading per card: how readings of one mark, or of one card's corners, are joined."""

from __future__ import annotations

import numpy as np

from table.vision.recognize import Detection, _detection, merge


def reading(
    code: str, conf: float, x: float, y: float, angle_deg: float = 0.0, size: float = 12
) -> Detection:
    """Returns a detection of a mark of ``size`` pixels centred on ``(x, y)``."""
    return _detection(code, None, conf, np.array([x, y]), size, np.radians(angle_deg))


def test_two_ranks_read_on_one_spot_keep_the_surer() -> None:
    kept = merge([reading("8", 0.8, 100, 100), reading("3", 0.95, 103, 101)])
    assert [d.card for d in kept] == ["3"]


def test_two_ranks_side_by_side_are_both_kept() -> None:
    kept = merge([reading("8", 0.8, 100, 100), reading("3", 0.95, 130, 100)])
    assert sorted(d.card for d in kept) == ["3", "8"]


def test_one_joker_read_at_its_four_corners_is_one_card() -> None:
    corners = [(100, 100, 0), (180, 100, 0), (180, 215, 180), (100, 215, 180)]
    kept = merge([reading("R", 0.9 + i / 100, x, y, a) for i, (x, y, a) in enumerate(corners)])
    assert len(kept) == 1


def test_cards_of_one_rank_fanned_side_by_side_stay_apart() -> None:
    kept = merge([reading("3", 0.99, 100 + 30 * i, 100) for i in range(3)])
    assert len(kept) == 3


def test_a_joker_with_small_letters_read_at_opposite_corners_is_one_card() -> None:
    """Letters 6 px tall on a 80x110 px card: the corners lie 19 letter sizes apart."""
    kept = merge([reading("B", 0.99, 100, 100, 0, size=6), reading("B", 0.98, 165, 195, 180, 6)])
    assert len(kept) == 1


def test_a_wide_ten_read_at_opposite_corners_is_one_card() -> None:
    """A ``10`` is wider than tall, so in its own widths the far corner is near."""
    kept = merge([reading("T", 0.99, 100, 100, 0, size=24), reading("T", 1.0, 150, 198, 178, 24)])
    assert len(kept) == 1


def test_two_tens_head_to_foot_side_by_side_stay_apart() -> None:
    kept = merge([reading("T", 0.99, 100, 100, 0, size=24), reading("T", 1.0, 150, 104, 180, 24)])
    assert len(kept) == 2
