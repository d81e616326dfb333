"""Scoring readings against ground truth: right, wrong, invented, missed, swaps."""

from __future__ import annotations

import numpy as np

from table.vision.evaluate import score_scene
from table.vision.recognize import Detection
from table.vision.synth import CardTruth, Scene


def card(code: str, x0: float, play: int = 0, seen: float = 1.0) -> CardTruth:
    """A 60x90 px card at ``x0`` with one rank mark in its top-left corner."""
    quad = ((x0, 0.0), (x0 + 60, 0.0), (x0 + 60, 90.0), (x0, 90.0))
    mark = ((x0 + 2, 2.0), (x0 + 12, 2.0), (x0 + 12, 16.0), (x0 + 2, 16.0))
    return CardTruth(code, None, "seat0", play, quad, ((mark, seen),))


def det(code: str, x: float, y: float = 9.0, confidence: float = 0.99) -> Detection:
    """A reading centred at ``(x, y)``."""
    return Detection(code, None, confidence, (x, y), ((x, y),) * 4)


def scene(*cards: CardTruth) -> Scene:
    """A scene of the given cards, later ones on top."""
    return Scene(tuple(cards), "test", np.eye(3))


def test_right_wrong_missed_and_invented_are_counted() -> None:
    truth = scene(card("3", 0), card("R", 20), card("9", 40, play=1), card("K", 200))
    score = score_scene(
        truth, [det("3", 7), det("B", 27), det("9", 47), det("9", 60), det("5", 500)]
    )
    assert (score.cards, score.right, score.wrong, score.missed) == (4, 2, 1, 1)
    assert score.invented == 2  # the second 9 on the same card, and the 5 on the table
    assert score.joker_swaps == 1
    assert (score.plays, score.plays_right) == (2, 0)
    assert score.sure_wrong == 3  # every wrong and invented reading above is sure


def test_only_sure_misreadings_are_counted_apart() -> None:
    """A wrong or invented reading under ``SURE`` is reported unsure: the referee asks."""
    truth = scene(card("3", 0), card("7", 100))
    score = score_scene(
        truth,
        [det("5", 7, confidence=0.8), det("8", 107), det("3", 9, confidence=0.95)],
    )
    assert (score.right, score.wrong, score.invented) == (0, 2, 0)
    assert score.sure_wrong == 1  # the 8; the 5 was unsure, the 3 right
    loose = score_scene(truth, [det("3", 7), det("3", 9, confidence=0.75), det("9", 400)])
    assert (loose.invented, loose.sure_wrong) == (2, 1)  # only the 9 on the table was sure


def test_partly_covered_mark_is_not_required() -> None:
    truth = scene(card("7", 0, seen=0.5))
    score = score_scene(truth, [])
    assert (score.cards, score.missed, score.accuracy) == (0, 0, 1.0)


def test_truth_round_trips_through_json_data() -> None:
    truth = scene(card("T", 0), card("B", 30))
    assert Scene.from_dict(truth.to_dict()).cards == truth.cards
