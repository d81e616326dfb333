"""One reading per card: how readings of one mark, or of one card's corners, are joined."""

from __future__ import annotations

import itertools
from dataclasses import replace

import numpy as np
import pytest

from table.vision.recognize import (
    TABLE_SCALE,
    Detection,
    _detection,
    _table,
    _without_pieces,
    merge,
)


def reading(
    code: str,
    conf: float,
    x: float,
    y: float,
    angle_deg: float = 0.0,
    size: float = 12,
    suit: str | None = None,
) -> Detection:
    """Returns a detection of a mark of ``size`` pixels centred on ``(x, y)``."""
    return _detection(code, suit, conf, np.array([x, y]), size, np.radians(angle_deg))


def table_mask(x0: int = 0, y0: int = 0, x1: int = 0, y1: int = 0) -> np.ndarray:
    """Returns a 1280x720 frame's table mask with the table showing in ``(x0, y0, x1, y1)``."""
    table = np.zeros((720 // TABLE_SCALE, 1280 // TABLE_SCALE), np.uint8)
    table[y0 // TABLE_SCALE : y1 // TABLE_SCALE, x0 // TABLE_SCALE : x1 // TABLE_SCALE] = 1
    return table


def test_two_ranks_read_on_one_spot_keep_the_surer() -> None:
    kept = merge([reading("8", 0.8, 100, 100), reading("3", 0.95, 103, 101)])
    assert [d.card for d in kept] == ["3"]


def test_a_piece_of_a_ten_read_as_another_rank_on_the_ten_is_dropped() -> None:
    """The ``0`` of a ten, read as a queen, lies 0.57 ten sizes from the ten's reading."""
    kept = merge([reading("T", 0.99, 100, 100, size=14), reading("Q", 0.94, 108, 100, size=10)])
    assert [d.card for d in kept] == ["T"]


def test_two_ranks_side_by_side_are_both_kept() -> None:
    kept = merge([reading("8", 0.8, 100, 100), reading("3", 0.95, 130, 100)])
    assert sorted(d.card for d in kept) == ["3", "8"]


def test_one_joker_read_at_its_four_corners_is_one_card() -> None:
    corners = [(100, 100, 0), (180, 100, 0), (180, 215, 180), (100, 215, 180)]
    kept = merge([reading("R", 0.9 + i / 100, x, y, a) for i, (x, y, a) in enumerate(corners)])
    assert len(kept) == 1


def test_a_fanned_pair_of_red_jokers_is_two_cards() -> None:
    """Two decks: the second joker shows its mark along the first one's top edge."""
    kept = merge([reading("R", 0.99, 100, 100, 10), reading("R", 0.98, 130, 105, 12)])
    assert len(kept) == 2
    letters = merge([reading("R", 0.99, 100, 100, 10), reading("R", 0.98, 102, 115, 12)])
    assert len(letters) == 1


@pytest.mark.parametrize(
    ("under", "top", "far"),
    [
        # Marks 24 px tall fanned 1.5 of them apart; the top joker's turned far corner,
        # read surest, lies where the one under it would have its own.
        ((0.96, 609, 532, 10, 24), (0.99, 644, 537, 11, 24), (1.0, 682, 652, 193, 24)),
        # Letters 8 px tall fanned 5 apart, where a four-index joker's top-right mark
        # would lie; the far corner, on the other side, shows the card is wider.
        ((0.98, 100, 100, 0, 8), (0.99, 140, 100, 0, 8), (1.0, 205, 195, 180, 8)),
    ],
    ids=["large marks", "small letters fanned wide"],
)
def test_the_top_joker_of_a_fanned_pair_keeps_its_own_far_corner_and_the_under_one_stays(
    under: tuple[float, ...], top: tuple[float, ...], far: tuple[float, ...]
) -> None:
    """The far corner is joined to the top card's own mark, the nearer; the under card's
    mark along the top edge is the next card of the fan (a four-index card's own
    top-right is told by its bottom corners)."""
    under_card = reading("R", *under)
    kept = merge([under_card, reading("R", *top), reading("R", *far)])
    assert len(kept) == 2
    assert under_card in kept


def test_jokers_with_small_letters_fanned_four_letters_apart_are_two_cards() -> None:
    """A fan step is many of the small letters of ``JOKER``: here 3.8 of them."""
    kept = merge([reading("R", 0.99, 603, 572, 6, 11), reading("R", 0.99, 561, 567, 8, 11)])
    assert len(kept) == 2


def test_a_jokers_reading_on_its_far_corners_side_is_not_a_fanned_card() -> None:
    """A reading five letters along towards the card's own far corner lies on the card
    itself (a piece of its picture): no card under it shows a mark there."""
    piece, top = reading("R", 1.0, 140, 100, 0, 8), reading("R", 0.99, 100, 100, 0, 8)
    far = reading("R", 0.97, 165, 195, 180, 8)
    assert len(merge([piece, top, far])) == 1


def test_a_four_index_jokers_top_marks_alone_are_one_card() -> None:
    """With no far corner in view, two marks five letters apart along the top are taken
    for one four-index joker's top corners, not a fan."""
    kept = merge([reading("R", 0.99, 100, 100, 0, 12), reading("R", 0.97, 160, 100, 0, 12)])
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


def test_a_four_index_card_read_at_its_top_and_bottom_left_corners_is_one_card() -> None:
    """Decks with an index in all four corners show the turned one under the upright one."""
    top, bottom = (
        (100, 100, 30),
        (100 - 90 * np.sin(np.radians(30)), 100 + 90 * np.cos(np.radians(30)), 210),
    )
    kept = merge([reading("8", 0.99, *top, suit="h"), reading("8", 0.97, *bottom, suit="h")])
    assert len(kept) == 1


def on_card(
    code: str, conf: float, u: float, v: float, turned: bool, suit: str | None = None
) -> Detection:
    """Returns the reading of a mark ``(u, v)`` mark sizes from a card's top-left index (at
    200, 200), the card turned 30 degrees; ``turned`` marks are printed upside down."""
    a = np.radians(30)
    x = 200 + 16 * (u * np.cos(a) - v * np.sin(a))
    y = 200 + 16 * (u * np.sin(a) + v * np.cos(a))
    return reading(code, conf, x, y, 30 + 180 * turned, size=16, suit=suit)


def test_a_four_index_card_is_one_card_however_many_of_its_corners_show() -> None:
    """Bonded prints an index in all four corners, as the training sheet has them: the
    top right 4.34 mark sizes along, the bottom ones 7.03 down."""
    corners = {
        "top left": on_card("8", 0.99, 0, 0, False),
        "top right": on_card("8", 0.995, 4.34, 0, False),
        "bottom right": on_card("8", 0.97, 4.34, 7.03, True),
        "bottom left": on_card("8", 0.98, 0, 7.03, True),
    }
    for hidden in (None, "bottom left", "bottom right"):
        kept = merge([d for name, d in corners.items() if name != hidden])
        assert len(kept) == 1, hidden


def test_a_four_index_card_is_one_card_whichever_of_its_corners_is_surest() -> None:
    """Each top index takes the turned one below it first when that is the surer; what is
    left, the top right and the bottom left, is the card's other diagonal."""
    spots = [(0, 0, False), (4.34, 0, False), (4.34, 7.03, True), (0, 7.03, True)]
    for order in itertools.permutations(range(4)):
        kept = merge([on_card("8", 0.99 - rank / 100, *spots[n]) for rank, n in enumerate(order)])
        assert len(kept) == 1, order


def test_a_four_index_card_whose_corners_are_read_some_degrees_apart_is_one_card() -> None:
    """A card's direction is read from the edges around each mark; a mark half covered
    may be read 15 degrees off, which over a card's height puts the other a mark size
    aside in its frame."""
    top = on_card("8", 0.99, 0, 0, False)
    for surer_off in (True, False):
        bottom = on_card("8", 0.995 if surer_off else 0.98, 0, 7.03, True)
        bottom = replace(bottom, angle=bottom.angle + 15)
        assert len(merge([top, bottom])) == 1, surer_off


def test_a_four_index_cards_top_indices_alone_are_one_card_as_far_apart_as_anothers() -> None:
    """A five whose bottom corners are hidden shows two top indices, as a fanned pair of
    fives would; the eight beside it, whose bottom corner shows, tells how far apart one
    card's top indices lie. A pair of fives fanned a fan step apart stays two."""
    eight = [
        on_card("8", 0.99, 0, 0, False),
        on_card("8", 0.98, 4.34, 0, False),
        on_card("8", 0.97, 4.34, 7.03, True),
    ]
    five = [on_card("5", 0.99, 12, 12, False), on_card("5", 0.98, 16.3, 12.1, False)]
    assert len(merge(eight + five)) == 2
    assert len(merge(five)) == 2  # nothing in the frame tells the card's width
    fanned = [on_card("5", 0.99, 12, 12, False), on_card("5", 0.98, 14.5, 12, False)]
    assert len(merge(eight + fanned)) == 3


def test_four_index_cards_of_one_rank_fanned_are_not_taken_for_one_by_their_corners() -> None:
    """In a fan of two, the top card's top-left index and the under card's bottom-left one
    lie down-left of each other, as one card's other diagonal would but a fan step across
    and a card's height down; read surest, each takes the mark beside it on its card."""
    for step in (1.5, 2.5, 3.5):
        under = [on_card("8", 0.99, 0, 7.03, True), on_card("8", 0.97, 0, 0, False)]
        top = [
            on_card("8", 0.995, step, 0, False),
            on_card("8", 0.96, step + 4.34, 0, False),
            on_card("8", 0.95, step + 4.34, 7.03, True),
            on_card("8", 0.94, step, 7.03, True),
        ]
        assert len(merge(under + top)) == 2, step


def test_four_index_cards_of_one_rank_fanned_a_card_apart_stay_two() -> None:
    """Two eights fanned with a three between them: their top indices lie as far apart as
    one card's two, and their bottom-left ones below them, but the three's index shows
    that the top edge between them is not one card's."""
    cards = [
        on_card("8", 0.99, 0, 0, False, "h"),
        on_card("8", 0.98, 0, 7.03, True),
        on_card("3", 0.99, 2.2, 0, False),
        on_card("8", 0.99, 4.4, 0, False, "h"),
        on_card("8", 0.97, 4.4, 7.03, True),
        on_card("8", 0.97, 8.74, 7.03, True),
    ]
    kept = merge(cards)
    assert sorted(d.card for d in kept) == ["3", "8", "8"]


def test_two_cards_of_one_rank_head_to_foot_stay_apart_by_suit_or_the_table_between() -> None:
    """The same spots hold two eights laid head to foot in two zones."""
    apart = table_mask(0, 140, 1280, 150)
    for suits, table, cards in (
        (("h", "s"), None, 2),
        ((None, None), apart, 2),
        (("h", None), apart, 2),
        ((None, None), None, 1),
    ):
        kept = merge(
            [
                reading("8", 0.99, 100, 100, 0, suit=suits[0]),
                reading("8", 0.97, 100, 190, 180, suit=suits[1]),
            ],
            table,
        )
        assert len(kept) == cards, (suits, table is None)


def test_a_fanned_pair_of_one_suit_stays_two_cards() -> None:
    """With two decks (4 players) a pair may share its suit; fanned, its marks lie
    where one card's top two corners would."""
    kept = merge([reading("8", 0.99, 100, 100, suit="h"), reading("8", 0.97, 160, 101, suit="h")])
    assert len(kept) == 2


def test_the_top_card_of_a_fanned_pair_of_one_suit_keeps_its_own_far_corner() -> None:
    """Two decks: the top card's far corner lies down and right of both cards' marks;
    it is the nearer one's, and the card under it stays a card."""
    under, top = reading("8", 0.97, 100, 100, suit="h"), reading("8", 0.98, 130, 100, suit="h")
    far = reading("8", 0.99, 190, 190, 180, suit="h")
    kept = merge([under, top, far])
    assert len(kept) == 2
    assert under in kept


def test_a_tightly_fanned_pair_with_large_marks_stays_two_cards() -> None:
    """Large marks on a tight fan: the next card's mark lies 1.2 mark sizes along."""
    kept = merge([reading("Q", 0.99, 100, 100, size=20), reading("Q", 0.98, 124, 101, size=20)])
    assert len(kept) == 2


def test_pieces_of_one_mark_read_alike_are_one_card() -> None:
    kept = merge([reading("T", 0.99, 100, 100, size=20), reading("T", 0.9, 110, 102, size=14)])
    assert len(kept) == 1


def test_two_surely_read_suits_are_two_cards_where_one_card_would_show_its_corners() -> None:
    """An eight of hearts down and right of an eight of spades, turned: a pair, not one card."""
    kept = merge(
        [reading("8", 0.99, 100, 100, 0, suit="s"), reading("8", 0.97, 160, 190, 180, suit="h")]
    )
    assert len(kept) == 2
    same = merge(
        [reading("8", 0.99, 100, 100, 0, suit="s"), reading("8", 0.97, 160, 190, 180, suit="s")]
    )
    assert len(same) == 1


def test_a_red_and_a_black_card_of_one_rank_are_two_cards_where_one_shows_its_corners() -> None:
    """A pair fanned with one card head to foot, no suit read: the inks' colours part it.
    One card's two corners differ a little (uneven light, JPEG), and stay one card."""
    top, turned = reading("8", 0.99, 100, 100, 0), reading("8", 0.97, 160, 190, 180)
    assert len(merge([top, turned], redness=lambda d: 90.0 if d is turned else 0.0)) == 2
    assert len(merge([top, turned], redness=lambda d: 20.0 if d is turned else 0.0)) == 1


def test_colour_is_measured_only_for_readings_about_to_be_joined() -> None:
    asked: list[str] = []

    def redness(d: Detection) -> float:
        asked.append(d.card)
        return 0.0

    merge([reading("8", 0.99, 100, 100), reading("3", 0.97, 160, 190, 180)], redness=redness)
    assert asked == []
    merge([reading("8", 0.99, 100, 100), reading("8", 0.97, 160, 190, 180)], redness=redness)
    assert asked == ["8", "8"]


def test_a_reading_much_smaller_than_the_frames_marks_is_a_piece() -> None:
    """The bowl of a turned 9 read as a Q at the far corner; a joker's small letter stays."""
    nines = [reading("9", 0.99, 100 + 40 * i, 100, size=12) for i in range(3)]
    piece = reading("Q", 0.98, 160, 190, 180, size=7)
    joker = reading("R", 0.95, 300, 100, size=7)
    kept = _without_pieces([*nines, piece, joker])
    assert [d.card for d in kept] == ["9", "9", "9", "R"]
    assert _without_pieces([piece, joker]) == [piece, joker]


def test_a_reading_on_the_spot_of_a_larger_sure_one_is_a_piece_of_it() -> None:
    """The ``1`` of a ``10`` whose digits stand apart, read as a queen surer than the ten,
    is a piece of the ten; a reading as large, or beside a less sure one, is not."""
    ten = reading("T", 0.98, 100, 100, size=15)
    one = reading("Q", 0.99, 95, 100, size=10)
    assert [d.card for d in merge(_without_pieces([ten, one]))] == ["T"]
    assert [d.card for d in merge([ten, one])] == ["Q"]  # the surer on one spot, as before
    unsure_ten = replace(ten, confidence=0.9)
    assert _without_pieces([unsure_ten, one]) == [unsure_ten, one]
    queen = reading("Q", 0.99, 95, 100, size=15)  # as large as the ten
    assert _without_pieces([ten, queen]) == [ten, queen]


def test_two_cards_with_the_table_between_them_are_never_joined() -> None:
    """Where one card would show its far corner, an eight lies on a card across the table."""
    pair = [reading("8", 0.99, 100, 100, 0), reading("8", 0.97, 160, 190, 180)]
    assert len(merge(pair, table_mask())) == 1
    assert len(merge(pair, table_mask(120, 0, 140, 720))) == 2


def test_the_table_is_ground_larger_than_any_card() -> None:
    """A court card's picture is ground too, but it never parts the card's corners."""
    ground = np.zeros((720, 1280), np.uint8)
    ground[:, :400] = 1  # felt beside the cards
    ground[300:400, 700:760] = 1  # a picture on a card
    table = _table(ground)
    assert table.shape == (720 // TABLE_SCALE, 1280 // TABLE_SCALE)
    assert table[100 // TABLE_SCALE, 200 // TABLE_SCALE] == 1
    assert table[350 // TABLE_SCALE, 730 // TABLE_SCALE] == 0
