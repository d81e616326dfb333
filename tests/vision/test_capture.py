"""Learning a deck: faces cut from frames of cards laid apart, saved, and loaded back."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from table.errors import UserError
from table.vision.capture import LEARN_ORDER, cut_cards, save_deck
from table.vision.faces import CARD_IDS, FACE_WIDTH, find_index_box, load_deck
from table.vision.synth import render_spread

pytestmark = pytest.mark.vision


def _likeness(cut: np.ndarray, face: np.ndarray) -> float:
    """Correlation of two faces' grey pictures at one size, either way up."""
    size = (40, 56)
    a = cv2.resize(cv2.cvtColor(cut[..., :3], cv2.COLOR_BGR2GRAY), size).astype(np.float32)
    b = cv2.resize(cv2.cvtColor(face[..., :3], cv2.COLOR_BGR2GRAY), size).astype(np.float32)
    return max(
        float(np.corrcoef(a.ravel(), b.ravel())[0, 1]),
        float(np.corrcoef(a.ravel(), b[::-1, ::-1].ravel())[0, 1]),
    )


@pytest.mark.parametrize("design", ["anglo", "paris", "plastic"])
def test_a_shown_suit_is_cut_into_its_faces_in_reading_order(design: str) -> None:
    cards = list(LEARN_ORDER[1])
    image, _ = render_spread(cards, seed=3, deck=design, px_per_mm=1.6)
    shown = cut_cards(image, len(cards))
    deck = load_deck(design)
    assert len(shown) == len(cards)
    for card, face in zip(cards, (one.face for one in shown), strict=True):
        assert face.shape[1] == FACE_WIDTH and face.shape[2] == 4
        assert 1.3 < face.shape[0] / face.shape[1] < 1.5
        # Each cut face looks most like the true face of the card laid at its place.
        best = max(cards, key=lambda other: _likeness(face, deck.faces[other]))
        assert best == card


def test_a_frame_without_the_expected_cards_apart_is_refused_with_a_message() -> None:
    image, _ = render_spread(list(LEARN_ORDER[0][:12]), seed=3, deck="own0", px_per_mm=1.6)
    with pytest.raises(UserError, match="found 12 cards where 13 were expected: lay each card"):
        cut_cards(image, 13)
    with pytest.raises(UserError, match="the frame is empty"):
        cut_cards(np.zeros((0, 0, 3), np.uint8), 13)


def test_a_saved_deck_loads_back_with_its_rank_marks_found(tmp_path: Path) -> None:
    source = load_deck("own2")
    save_deck({card: source.faces[card] for card in CARD_IDS}, tmp_path / "deck")
    learnt = load_deck(str(tmp_path / "deck"))
    assert set(learnt.faces) == set(CARD_IDS)
    assert len({face.shape for face in learnt.faces.values()}) == 1
    # The rank mark is found where it is on the source face (same width, so same pixels).
    assert np.allclose(learnt.index["7h"], source.index["7h"], atol=2)


def test_a_deck_folder_missing_a_face_is_refused_with_a_message(tmp_path: Path) -> None:
    source = load_deck("own0")
    save_deck({card: source.faces[card] for card in CARD_IDS if card != "Qd"}, tmp_path / "d")
    with pytest.raises(UserError, match=r"has no readable face Qd\.png; learn the deck again"):
        load_deck(str(tmp_path / "d"))
    with pytest.raises(UserError, match=r"no learnt deck folder .*; learn one with"):
        load_deck(str(tmp_path / "nowhere"))


def test_a_face_whose_mark_the_camera_lost_gets_the_deck_s_usual_mark_box(
    tmp_path: Path,
) -> None:
    source = load_deck("own2")
    faces = {card: source.faces[card].copy() for card in CARD_IDS}
    x0, y0, x1, y1 = source.index["5h"]
    faces["5h"][y0 - 1 : y1 + 1, x0 - 1 : x1 + 1, :3] = 255  # the mark washed out
    assert find_index_box(faces["5h"]) != source.index["5h"]  # alone, a pip is taken
    save_deck(faces, tmp_path / "deck")
    learnt = load_deck(str(tmp_path / "deck"))
    assert np.allclose(learnt.index["5h"], source.index["5h"], atol=3)
