"""Play extraction: new cards in a zone, stability over frames, low confidence."""

from __future__ import annotations

import numpy as np
import pytest

from table.vision.calibration import TableLayout
from table.vision.plays import (
    PlayExtractor,
    canonical,
    extract_play,
    new_cards,
    settled_play,
)
from table.vision.recognize import Detection, read_cards
from table.vision.synth import render_table


def det(card: str, x: float, y: float, confidence: float = 0.99) -> Detection:
    """Builds a reading at a point."""
    return Detection(card, None, confidence, (x, y), ((x, y),) * 4)


def test_canonical_sorts_low_to_high() -> None:
    assert canonical("2A3BR4") == "34A2BR"


def test_new_cards_ignores_cards_already_there() -> None:
    old = [det("3", 100, 100), det("3", 120, 100)]
    now = [det("3", 101, 99), det("3", 121, 101), det("3", 200, 100), det("7", 220, 100)]
    assert canonical(d.card for d in new_cards(old, now, radius=8)) == "37"


def test_stable_reading_is_committed() -> None:
    frames = [[det("4", 10, 10), det("4", 30, 10)]] * 3
    reading = extract_play([], frames, stable_frames=3)
    assert reading.is_confident
    assert reading.cards == "44"


def test_flicker_delays_commit_until_stable() -> None:
    good = [det("5", 10, 10), det("6", 30, 10)]
    frames = [good, [det("5", 10, 10)], good, good, good]
    reading = extract_play([], frames, stable_frames=3)
    assert (reading.cards, reading.frames) == ("56", 5)


def test_low_confidence_is_reported_not_guessed() -> None:
    frames = [[det("8", 10, 10, 0.6)]] * 10
    reading = extract_play([], frames, stable_frames=3, min_confidence=0.9)
    assert not reading.is_confident
    assert reading.cards == "8"
    assert reading.confidence <= 0.6


def test_extractor_tells_second_play_from_first() -> None:
    extractor = PlayExtractor(stable_frames=2, max_frames=6)
    first = [det("9", 10, 10), det("9", 30, 10)]
    extractor.press()
    assert extractor.feed(first) is None
    reading = extractor.feed(first)
    assert reading is not None and reading.cards == "99" and reading.is_confident
    second = [*first, det("K", 60, 10), det("K", 80, 10)]
    extractor.press()
    results = [extractor.feed(second) for _ in range(2)]
    assert results[-1] is not None and results[-1].cards == "KK"


def test_extractor_gives_up_after_max_frames() -> None:
    extractor = PlayExtractor(stable_frames=3, max_frames=4)
    extractor.press()
    out = [extractor.feed([det("J", 10, 10, 0.5)]) for _ in range(4)]
    assert out[:3] == [None, None, None]
    assert out[3] is not None and not out[3].is_confident and out[3].cards == "J"
    assert not extractor.is_waiting


def test_press_after_the_cards_lay_still_commits_at_once() -> None:
    extractor = PlayExtractor(stable_frames=3)
    laid = [det("7", 10, 10), det("7", 30, 10)]
    for _ in range(3):
        assert extractor.feed(laid) is None
    reading = extractor.press()
    assert reading is not None and reading.is_confident and reading.cards == "77"
    assert not extractor.is_waiting


def test_press_while_cards_still_move_waits_and_never_commits_an_older_reading() -> None:
    extractor = PlayExtractor(stable_frames=3)
    first = [det("5", 10, 10)]
    both = [*first, det("6", 30, 10)]
    for frame in (first, first, first, both):
        extractor.feed(frame)
    assert extractor.press() is None
    assert extractor.feed(both) is None
    reading = extractor.feed(both)
    assert reading is not None and reading.cards == "56" and reading.is_confident


def test_press_on_flickering_history_waits_for_agreeing_frames() -> None:
    extractor = PlayExtractor(stable_frames=3)
    good = [det("9", 10, 10), det("T", 30, 10)]
    for frame in (good, [det("9", 10, 10)], good):
        extractor.feed(frame)
    assert extractor.press() is None
    assert extractor.feed(good) is None  # the frame before the press counts: two agree
    reading = extractor.feed(good)
    assert reading is not None and reading.cards == "9T" and reading.frames == 4


def test_press_commits_through_a_frame_that_read_the_same_cards_less_surely() -> None:
    extractor = PlayExtractor(stable_frames=3)
    sure = [det("8", 10, 10), det("8", 30, 10)]
    flicker = [det("8", 10, 10), det("8", 30, 10, confidence=0.6)]
    for frame in (sure, sure, flicker, sure):
        extractor.feed(frame)
    reading = extractor.press()
    assert reading is not None and reading.is_confident and reading.cards == "88"


def test_settled_play_is_ended_by_other_cards_or_a_hand_over_the_zone() -> None:
    sure = [det("J", 10, 10)]
    both = [*sure, det("Q", 30, 10)]
    unsure = [det("J", 10, 10, confidence=0.6)]
    assert settled_play([], [sure, sure, sure]) is not None
    assert settled_play([], [sure, sure, both, both]) is None  # a card added since
    assert settled_play([], [sure, sure, [], sure]) is None  # a hand passed over
    assert settled_play([], [sure, unsure, unsure, sure]) is None  # only two sure frames


def test_unsure_history_is_still_reported_unsure_with_what_was_seen() -> None:
    extractor = PlayExtractor(stable_frames=3, max_frames=4)
    low = [det("Q", 10, 10, 0.5)]
    for _ in range(3):
        extractor.feed(low)
    assert extractor.press() is None
    out = [extractor.feed(low) for _ in range(2)]
    assert out[0] is None
    assert out[1] is not None and not out[1].is_confident and out[1].cards == "Q"
    assert [d.card for d in out[1].seen] == ["Q"]


def test_cards_old_at_a_new_trick_or_unseen_after_a_loss_are_not_committed() -> None:
    extractor = PlayExtractor(stable_frames=2, max_frames=4)
    old = [det("A", 10, 10)]
    for _ in range(2):
        extractor.feed(old)
    extractor.clear(old)
    assert extractor.press() is None
    extractor.cancel()
    fresh = [*old, det("2", 40, 10)]
    for _ in range(2):
        extractor.feed(fresh)
    extractor.forget_recent()
    assert extractor.press() is None
    reading = extractor.feed(fresh)
    assert reading is None
    reading = extractor.feed(fresh)
    assert reading is not None and reading.cards == "2"


@pytest.mark.vision
@pytest.mark.slow
def test_plays_from_rendered_frames_with_a_hand_passing() -> None:
    """A trick in one zone: a pair, then a pair on top of it, a hand over the zone between."""
    layout = TableLayout()
    extractor = PlayExtractor(stable_frames=3, max_frames=12, min_confidence=0.8)
    zone = "seat0"

    def frame(plays: list[str], number: int, hand: bool = False) -> list[Detection]:
        image, scene = render_table(
            {zone: plays}, seed=21, deck="anglo", frame=number, hand=hand, px_per_mm=1.45
        )
        h = np.linalg.inv(scene.table_to_image)
        x0, y0, x1, y1 = layout.zones[zone]
        out = []
        for d in read_cards(image):
            p = h @ np.array([d.center[0], d.center[1], 1.0])
            tx, ty = p[:2] / p[2]
            if x0 <= tx <= x1 and y0 <= ty <= y1:
                out.append(d)
        return out

    extractor.press()
    reading = None
    for n, hand in enumerate([True, False, False, False, False]):
        reading = extractor.feed(frame(["5h 5s"], n, hand)) or reading
        if reading:
            break
    assert reading is not None and reading.cards == "55" and reading.is_confident
    extractor.press()
    reading = None
    for n in range(10, 16):
        reading = extractor.feed(frame(["5h 5s", "9c 9d"], n))
        if reading:
            break
    assert reading is not None and reading.cards == "99" and reading.is_confident
