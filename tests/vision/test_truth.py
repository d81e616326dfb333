"""Ground-truth rank-mark boxes of card faces, on small drawn faces."""

from __future__ import annotations

import cv2
import numpy as np

from table.vision.faces import OUTLINE_BAND, find_index_box
from table.vision.synth import mark_quads

WIDTH, HEIGHT = 160, 230


def blank_face() -> np.ndarray:
    """Returns an opaque white BGRA face with a 2-pixel black outline, like a theme's card."""
    face = np.full((HEIGHT, WIDTH, 4), 255, np.uint8)
    cv2.rectangle(face, (0, 0), (WIDTH - 1, HEIGHT - 1), (0, 0, 0, 255), 2)
    return face


def draw_mark(face: np.ndarray, x: int, y: int, turned: bool = False) -> None:
    """Draws an ``L``-shaped 12x30 mark with its top-left at ``(x, y)``, or turned 180 degrees."""
    mark = np.zeros((30, 12), np.uint8)
    mark[:, :4] = 1
    mark[-4:, :] = 1
    if turned:
        mark = mark[::-1, ::-1]
    face[y : y + 30, x : x + 12][mark.astype(bool)] = (0, 0, 0, 255)


def test_index_printed_against_the_outline_gets_its_own_box() -> None:
    face = blank_face()
    draw_mark(face, 2, 10)  # touches the outline
    cv2.circle(face, (10, 56), 6, (0, 0, 0, 255), -1)  # the suit pip below
    x0, y0, x1, y1 = find_index_box(face)
    assert (y0, x1, y1) == (10, 14, 40)
    assert x0 <= OUTLINE_BAND + 1


def test_ten_joins_the_digit_beside_it_but_not_the_pip_beyond() -> None:
    face = blank_face()
    face[10:40, 10:14] = (0, 0, 0, 255)  # the 1
    cv2.ellipse(face, (24, 25), (6, 15), 0, 0, 360, (0, 0, 0, 255), 3)  # the 0
    cv2.circle(face, (47, 25), 12, (0, 0, 0, 255), -1)  # a pip of the same height beside it
    assert find_index_box(face, is_ten=True) == (10, 8, 33, 43)


def test_solid_pip_at_the_opposite_corner_is_not_a_turned_bold_mark() -> None:
    face = blank_face()
    face[10:40, 8:20] = (0, 0, 0, 255)  # a bold 8: nearly all ink, with two small counters
    face[14:20, 12:16] = face[28:34, 12:16] = (255, 255, 255, 255)
    cv2.circle(face, (WIDTH - 10, HEIGHT - 20), 40, (0, 0, 0, 255), -1)
    assert len(mark_quads(face, (8, 10, 20, 40))) == 1


def test_turned_and_top_right_repeats_are_found_where_they_are_printed() -> None:
    face = blank_face()
    draw_mark(face, 8, 10)
    draw_mark(face, WIDTH - 8 - 12 + 2, 10)  # upright copy at the top right, 2 px off
    draw_mark(face, WIDTH - 8 - 12 - 1, HEIGHT - 10 - 30, turned=True)
    draw_mark(face, 8, HEIGHT - 10 - 30 + 3, turned=True)
    quads = mark_quads(face, (8, 10, 20, 40))
    assert len(quads) == 4
    first_corners = sorted(tuple(q[0]) for q in quads)
    assert first_corners == sorted(
        [
            (8, 10),
            (WIDTH - 18, 10),
            (WIDTH - 9, HEIGHT - 10),  # turned: its first corner is the bottom-right one
            (20, HEIGHT - 7),
        ]
    )
