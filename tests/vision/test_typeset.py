"""Typeset decks: the project's own faces with rank marks set in installed fonts.

Training sets them in the fonts of ``FONT_PACKAGES`` (``scripts/lib.sh``, installed by
``bash scripts/train``); these tests need only the two families ``bash scripts/test``
installs (DejaVu Sans and Serif).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping

import cv2
import numpy as np
import pytest

from table.errors import UserError
from table.vision import typeset
from table.vision.faces import (
    BLACK_RED_CAST,
    INDEX_LETTERS,
    OUTLINE_BAND,
    OWN_DECKS,
    JokerWord,
    drawn_deck,
    find_index_box,
    ink_mask,
    joker_word,
    load_deck,
)
from table.vision.synth import render_table

pytestmark = pytest.mark.vision


@pytest.fixture(scope="module")
def fonts() -> list[str]:
    """Returns the usable fonts; the test command installs DejaVu (fonts-dejavu-core) and
    the training fonts, and a machine without them fails here with what to install."""
    found = typeset.typeset_fonts()
    if len(found) < 2:
        pytest.fail(
            f"the typeset tests need two usable fonts, found {len(found)}: install fontconfig, "
            "and fonts-dejavu-core or FONT_PACKAGES of scripts/lib.sh (bash scripts/test does)"
        )
    return found


@pytest.fixture
def fresh_fonts() -> Iterator[None]:
    """Forgets the chosen fonts and decks before and after a test that fakes fontconfig."""
    typeset._usable_faces.cache_clear()
    load_deck.cache_clear()
    yield
    typeset._usable_faces.cache_clear()
    load_deck.cache_clear()


def test_deck_has_all_faces_of_one_size(fonts: list[str]) -> None:
    deck = load_deck("font0")
    assert deck.name == "font0"
    assert len(deck.faces) == 54 and set(deck.faces) == set(deck.index)
    assert {"B", "R", "Th", "As", "Kd"} <= set(deck.faces)
    shapes = {face.shape for face in deck.faces.values()}
    assert len(shapes) == 1
    height, width, channels = shapes.pop()
    assert channels == 4 and width == 160 and 1.38 * width <= height <= 1.5 * width


@pytest.mark.parametrize("name", ["font0", "font1", "font2", "font3"])
def test_index_box_is_the_mark_ink(fonts: list[str], name: str) -> None:
    """The box holds the whole mark, touches its ink on every side and none of the pip."""
    deck = load_deck(name)
    agree = 0
    for card, face in deck.faces.items():
        x0, y0, x1, y1 = deck.index[card]
        height, width = face.shape[:2]
        inner = np.zeros((height, width), np.uint8)
        inner[OUTLINE_BAND:-OUTLINE_BAND, OUTLINE_BAND:-OUTLINE_BAND] = 1
        ink = ink_mask(face) & inner
        ink[height // 2 :] = 0
        _, labels, stats, _ = cv2.connectedComponentsWithStats(ink, connectivity=8)
        inside = set(np.unique(labels[y0:y1, x0:x1])) - {0}
        assert inside, f"{name} {card}: no ink in the box"
        xs = [stats[k, 0] for k in inside] + [stats[k, 0] + stats[k, 2] for k in inside]
        ys = [stats[k, 1] for k in inside] + [stats[k, 1] + stats[k, 3] for k in inside]
        # Every component the box touches lies in it (one pixel of faint edge allowed),
        # so neither the pip nor the next joker letter reaches into the box ...
        assert min(xs) >= x0 - 1 and max(xs) <= x1 + 1, f"{name} {card}"
        assert min(ys) >= y0 - 1 and max(ys) <= y1 + 1, f"{name} {card}"
        # ... and the box is tight around that ink.
        assert min(xs) <= x0 + 1 and max(xs) >= x1 - 1, f"{name} {card}"
        assert min(ys) <= y0 + 1 and max(ys) >= y1 - 1, f"{name} {card}"
        found = find_index_box(face, card[0] == "T")
        agree += max(abs(a - b) for a, b in zip(found, deck.index[card], strict=True)) <= 1
    # The heuristic finder sees the same box on most faces (it may split a "10" or a K).
    assert agree >= 0.85 * len(deck.faces)


def test_fonts_differ_between_decks(fonts: list[str]) -> None:
    assert fonts[0] != fonts[1]
    marks = []
    for name in ("font0", "font1"):
        deck = load_deck(name)
        x0, y0, x1, y1 = deck.index["Ks"]
        marks.append(cv2.resize(deck.faces["Ks"][y0:y1, x0:x1, :3], (32, 48)).astype(float))
    assert np.abs(marks[0] - marks[1]).mean() > 5
    assert load_deck("font0").faces["As"].tobytes() != load_deck("font1").faces["As"].tobytes()


def test_font_order_is_stable(fonts: list[str], fresh_fonts: None) -> None:
    assert typeset.typeset_fonts() == fonts
    assert typeset.typeset_decks() == [f"font{i}" for i in range(len(fonts))]


def test_fonts_outside_the_training_packages_are_left_out(fonts: list[str]) -> None:
    """Chromium brings the Liberation fonts; had they counted, six decks would change font
    once the tests ran, and training would give another model."""
    assert not any("liberation" in file.lower() for file in fonts), fonts


def test_font_that_falls_back_is_skipped(
    fonts: list[str], fresh_fonts: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = typeset._usable_faces()[0]
    fake = typeset.FontFace("/nowhere/NoSuchFont.ttf", "No Such Family Qx", "Regular", 80, 0, 100)
    assert typeset.resolves(real)
    assert not typeset.resolves(fake)
    typeset._usable_faces.cache_clear()
    monkeypatch.setattr(typeset, "_list_faces", lambda: [fake, real])
    assert typeset.typeset_fonts() == [real.file]


def test_no_fonts_is_a_user_error(fresh_fonts: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(typeset, "_list_faces", list)
    assert typeset.typeset_decks() == []
    with pytest.raises(UserError, match="fonts-urw-base35"):
        load_deck("font0")


def test_some_decks_print_a_polish_german_or_french_index(
    fonts: list[str], fresh_fonts: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Decks with W, B or V for the jack, D for the queen, R for the king are taught too:
    untaught, the reader read a German queen's ``D`` as a ten."""
    monkeypatch.setattr(typeset, "_usable_faces", lambda: (typeset._list_faces()[0],) * 60)
    chosen: list[Mapping[str, str]] = []
    monkeypatch.setattr(typeset.faces, "drawn_deck", lambda *args, **_: chosen.append(args[-1]))
    for variant in range(60):
        typeset.typeset_deck(variant)
    languages = Counter(
        next(k for k, v in INDEX_LETTERS.items() if v == letters) for letters in chosen
    )
    assert set(languages) == set(INDEX_LETTERS)
    assert 0.5 < languages["english"] / 60 < 0.75, languages


def test_an_index_is_printed_in_its_language_and_a_joker_stays_joker() -> None:
    printed: list[str] = []

    def ink(text: str, size: int, wide: float) -> np.ndarray:
        printed.append(text)
        return np.full((size, max(1, int(size * 0.6 * wide))), 255, np.uint8)

    colours = ((30, 30, 200), (20, 20, 20))
    deck = drawn_deck("t", (200, 290), 30, 1.0, False, 8, colours, ink, INDEX_LETTERS["french"])
    assert len(deck.faces) == 54
    assert set(printed) == set("A23456789VDR") | {"10"} | set("JOKER")
    assert printed.count("V") == printed.count("D") == printed.count("R") - 2 == 4


def test_scene_truth_marks_lie_on_ink(fonts: list[str]) -> None:
    image, scene = render_table({"seat0": [["Th", "Qs", "B", "R"]]}, seed=1, deck="font0")
    assert [card.card for card in scene.cards] == ["T", "Q", "B", "R"]
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY).astype(np.int16)
    for card in scene.cards:
        seen = [np.array(quad) for quad, part in card.marks if part >= 0.9]
        assert seen, f"{card.card}: no mark in view"
        for quad in seen:
            mask = np.zeros(grey.shape, np.uint8)
            cv2.fillConvexPoly(mask, np.round(quad).astype(np.int32), 1)
            ring = cv2.dilate(mask, np.ones((9, 9), np.uint8)) - cv2.dilate(
                mask, np.ones((3, 3), np.uint8)
            )
            inside, around = grey[mask > 0], grey[ring > 0]
            # The mark is printed: plenty of dark pixels inside, paper around it.
            dark = inside < np.percentile(around, 90) - 60
            assert dark.mean() > 0.15, f"{card.card}: too little ink in {quad.tolist()}"
            assert np.percentile(inside, 10) < np.percentile(around, 50) - 40


def test_a_deck_past_the_installed_fonts_is_a_user_error(fonts: list[str]) -> None:
    with pytest.raises(UserError, match=f"font0 .. font{len(fonts) - 1}"):
        load_deck(f"font{len(fonts)}")


@pytest.mark.parametrize("variant", range(len(OWN_DECKS)))
def test_a_drawn_decks_black_joker_prints_black(variant: int) -> None:
    """The reader calls ink red when it is 12 or more redder than green (``RED_EXCESS``):
    own1's black, drawn as BGR (9, 3, 21), made its black joker read red."""
    face = load_deck(f"own{variant}").faces["B"]
    green, red = face[..., 1].astype(int), face[..., 2].astype(int)
    ink = (face[..., 3] > 0) & (face[..., :3].max(axis=2) < 60)
    assert ink.sum() > 100
    assert (red - green)[ink].max() <= BLACK_RED_CAST


def test_drawn_jokers_print_small_words_and_jack_sized_js() -> None:
    """A joker's J as large as a jack's, over small letters, is taught only if some decks
    print it (tango's jokers were read as jacks)."""
    words = [joker_word(np.random.default_rng(seed)) for seed in range(60)]
    assert 10 <= words.count(JokerWord()) <= 30
    assert any(w.first >= 0.95 and w.rest <= 0.7 for w in words)
    assert all(0.6 <= w.first <= 1.05 and 2 <= w.spacing <= 8 for w in words)
