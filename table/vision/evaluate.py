"""Scores card readings against the ground truth of rendered scenes.

A reading is matched to the card whose face is on top at the reading's centre.
It is *right* when the rank code matches, *wrong* when it does not, and
*invented* when no card is there or the card was already read once.
A card counts only if at least one of its rank marks is in view. A wrong or invented
reading made surely (``SURE`` or more) is counted apart: a referee must report a card
it cannot read as unsure, never name another.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

from table.errors import UserError
from table.vision.recognize import SURE, Detection
from table.vision.synth import Scene


@dataclass
class Score:
    """Counts over one or more scenes; the ``*_rate`` properties are the targets."""

    cards: int = 0
    right: int = 0
    wrong: int = 0
    invented: int = 0
    missed: int = 0
    plays: int = 0
    plays_right: int = 0
    joker_swaps: int = 0
    sure_wrong: int = 0
    confusions: dict[str, int] = field(default_factory=dict)

    def add(self, other: Score) -> None:
        """Adds another score's counts to this one."""
        for name in (
            "cards",
            "right",
            "wrong",
            "invented",
            "missed",
            "plays",
            "plays_right",
            "joker_swaps",
            "sure_wrong",
        ):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for key, count in other.confusions.items():
            self.confusions[key] = self.confusions.get(key, 0) + count

    @property
    def accuracy(self) -> float:
        """Share of readable cards read right (and not also read wrong)."""
        return self.right / self.cards if self.cards else 1.0

    @property
    def play_accuracy(self) -> float:
        """Share of plays whose every readable card was read right, with nothing invented."""
        return self.plays_right / self.plays if self.plays else 1.0

    @property
    def invented_rate(self) -> float:
        """Invented readings per readable card."""
        return self.invented / self.cards if self.cards else 0.0

    def to_dict(self) -> dict[str, object]:
        """Returns the counts and rates as plain data."""
        return {
            "cards": self.cards,
            "right": self.right,
            "wrong": self.wrong,
            "missed": self.missed,
            "invented": self.invented,
            "plays": self.plays,
            "plays_right": self.plays_right,
            "joker_swaps": self.joker_swaps,
            "sure_wrong": self.sure_wrong,
            "accuracy": round(self.accuracy, 5),
            "play_accuracy": round(self.play_accuracy, 5),
            "invented_rate": round(self.invented_rate, 5),
            "confusions": dict(sorted(self.confusions.items())),
        }


def _top_card(scene: Scene, point: tuple[float, float]) -> int | None:
    """Returns the index of the card drawn last (on top) that covers ``point``."""
    for i in range(len(scene.cards) - 1, -1, -1):
        quad = np.array(scene.cards[i].quad, np.float32)
        if cv2.pointPolygonTest(quad, (float(point[0]), float(point[1])), False) >= 0:
            return i
    return None


def score_scene(scene: Scene, detections: Sequence[Detection]) -> Score:
    """Scores the readings of one scene."""
    score = Score()
    verdict: dict[int, list[bool]] = {}
    play_bad: set[tuple[str, int]] = set()
    for det in detections:
        sure = det.confidence >= SURE
        i = _top_card(scene, det.center)
        if i is None:
            score.invented += 1
            score.sure_wrong += int(sure)
            continue
        truth = scene.cards[i]
        if det.card == truth.card and any(verdict.get(i, [])):
            score.invented += 1
            score.sure_wrong += int(sure)
            play_bad.add((truth.zone, truth.play))
            continue
        ok = det.card == truth.card
        verdict.setdefault(i, []).append(ok)
        if not ok:
            score.sure_wrong += int(sure)
            play_bad.add((truth.zone, truth.play))
            key = f"{truth.card}->{det.card}"
            score.confusions[key] = score.confusions.get(key, 0) + 1
            if {truth.card, det.card} == {"B", "R"}:
                score.joker_swaps += 1
    plays: set[tuple[str, int]] = set()
    for i, truth in enumerate(scene.cards):
        seen = verdict.get(i, [])
        if not truth.is_readable:
            score.wrong += seen.count(False)
            continue
        plays.add((truth.zone, truth.play))
        score.cards += 1
        if seen and all(seen):
            score.right += 1
        elif seen:
            score.wrong += 1
        else:
            score.missed += 1
            play_bad.add((truth.zone, truth.play))
    score.plays = len(plays)
    score.plays_right = len(plays - play_bad)
    return score


def load_truth(path: Path) -> Scene:
    """Reads a ``*.json`` truth file written by ``ddz-table vision render``.

    :raises UserError: when the file is not a scene truth file.
    """
    try:
        return Scene.from_dict(json.loads(Path(path).read_text(encoding="utf-8")))
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise UserError(f"{path} is not a scene truth file ({error})") from error


def pairs(directory: Path) -> Iterable[tuple[Path, Path]]:
    """Lists ``(image, truth)`` pairs in a directory: ``NAME.jpg``/``.png`` next to ``NAME.json``.

    :raises UserError: when the directory holds no such pair.
    """
    directory = Path(directory)
    if not directory.is_dir():
        raise UserError(f"{directory} is not a directory; make one with 'ddz-table vision render'")
    found = []
    for truth in sorted(directory.glob("*.json")):
        for ext in (".png", ".jpg", ".jpeg"):
            image = truth.with_suffix(ext)
            if image.exists():
                found.append((image, truth))
                break
    if not found:
        raise UserError(f"no image with a .json truth file in {directory}")
    return found
