"""Calibration: markers on a rendered table, zones, save and load, bad frames."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from table.errors import UserError
from table.vision.calibration import (
    READ_COLOUR,
    Calibration,
    TableLayout,
    calibrate,
    detect_markers,
    draw_zones,
    load,
    markers_sheet,
)
from table.vision.synth import render_table


def test_calibration_maps_cards_to_their_zones(tmp_path: Path) -> None:
    image, scene = render_table({"seat0": "345", "seat1": "99", "kitty": "BR2"}, seed=5)
    calibration = calibrate(image)
    for card in scene.cards:
        centre = np.mean(card.quad, axis=0)
        assert calibration.zone_of((float(centre[0]), float(centre[1]))) == card.zone
    path = tmp_path / "calibration.json"
    calibration.save(path)
    again = load(path)
    assert np.allclose(again.homography, calibration.homography)
    assert again.layout == calibration.layout


def test_homography_matches_the_rendering_camera() -> None:
    image, scene = render_table({"seat0": "3"}, seed=9)
    calibration = calibrate(image)
    table_points = np.array([[100.0, 100.0], [700.0, 400.0], [410.0, 230.0]])
    truth = scene.table_to_image
    pts = np.c_[table_points, np.ones(3)] @ truth.T
    expected = pts[:, :2] / pts[:, 2:]
    assert np.abs(calibration.to_image(table_points) - expected).max() < 2.0


def test_the_card_width_the_reader_sees_comes_from_the_markers() -> None:
    image, _ = render_table({"seat0": "3"}, seed=9, px_per_mm=1.45)
    calibration = calibrate(image)
    assert calibration.px_per_mm() == pytest.approx(1.45, rel=0.05)
    assert calibration.read_card_width() == pytest.approx(63 * 1.45, rel=0.05)
    assert calibration.card_size_problem() is None
    # The same view from a 1080p camera: the reader shrinks it, so it sees the same cards.
    image, _ = render_table({"seat0": "3"}, seed=9, px_per_mm=1.45, size=(1920, 1080))
    large = calibrate(image)
    assert large.px_per_mm() == pytest.approx(1.5 * 1.45, rel=0.05)
    assert large.read_card_width() == pytest.approx(63 * 1.45, rel=0.05)


def test_a_loosely_framed_camera_is_read_around_the_table_only() -> None:
    # A 1080p camera showing the table in its middle, at 1.3 px a millimetre.
    image, _ = render_table({"seat0": "3"}, seed=9, px_per_mm=1.3 / 1.5, size=(1920, 1080))
    calibration = calibrate(image)
    left, top, right, bottom = calibration.reading_window()
    assert left >= 0 and top >= 0 and right <= 1920 and bottom <= 1080
    assert right - left < 0.7 * 1920, "the floor around the table is not read"
    margin = 88 * 1.3 * 0.95  # a card's height: a card lying over a zone's edge is read whole
    for x0, y0, x1, y1 in calibration.layout.zones.values():
        corners = calibration.to_image(np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]]))
        xs, ys = corners[:, 0], corners[:, 1]
        assert left + margin <= xs.min() and xs.max() <= right - margin
        assert top <= ys.min() and ys.max() <= bottom
    # Read at its own size (shrunk with the whole frame to 1280 px, two thirds of it).
    assert calibration.read_card_width() > 0.95 * 63 * calibration.px_per_mm()


def test_cards_too_small_or_too_large_for_the_reader_say_what_to_change() -> None:
    # The same view from an 800x450 camera: cards about 56 px wide.
    image, _ = render_table({"seat0": "3"}, seed=9, px_per_mm=1.45, size=(800, 450))
    problem = calibrate(image).card_size_problem()
    assert problem is not None
    assert "px wide to the card reader" in problem and "reads them well at 80-160" in problem
    assert "lower the camera" in problem and "a camera mode of 1280x720" in problem
    # Image pixels to table mm: 2.8 pixels a millimetre, a card 176 px wide.
    close = Calibration(np.diag([1 / 2.8, 1 / 2.8, 1.0]), (1280, 720), TableLayout())
    problem = close.card_size_problem()
    assert problem is not None and "about 176 px" in problem and "raise the camera" in problem


def test_a_zone_partly_out_of_the_frame_is_named() -> None:
    image, _ = render_table({"seat0": "3"}, seed=9, px_per_mm=1.45)
    calibration = calibrate(image)
    assert calibration.zone_problem() is None
    zones = {**calibration.layout.zones, "kitty": (300.0, 170.0, 520.0, 600.0)}
    beyond = Calibration(calibration.homography, (1280, 720), TableLayout(zones=zones))
    problem = beyond.zone_problem()
    assert problem is not None and "zone(s) kitty lie partly outside" in problem


def test_preview_draws_on_a_copy() -> None:
    image, _ = render_table({}, seed=2, px_per_mm=1.0)
    calibration = calibrate(image)
    preview = draw_zones(image, calibration)
    assert preview.shape == image.shape
    assert (preview != image).any()
    left, top, right, bottom = calibration.reading_window()
    for x in (left, right - 1):
        assert (preview[top + 20 : bottom - 20, x] == READ_COLOUR).all(), "the reader's window"


def test_marker_sheet_markers_are_detectable() -> None:
    sheet = markers_sheet(TableLayout(), dpi=100)
    assert sorted(detect_markers(sheet)) == [0, 1, 2, 3]


def test_frame_without_markers_is_a_clear_error() -> None:
    blank = np.full((720, 1280, 3), 90, np.uint8)
    with pytest.raises(UserError, match="marker"):
        calibrate(blank)


def test_empty_frame_is_a_clear_error() -> None:
    with pytest.raises(UserError, match="empty"):
        calibrate(np.zeros((0, 0, 3), np.uint8))


def test_zone_config_is_validated() -> None:
    layout = TableLayout.from_dict({"width_mm": 900, "zones": {"seat0": [0, 0, 100, 50]}})
    assert layout.width_mm == 900 and layout.zones["seat0"] == (0, 0, 100, 50)
    with pytest.raises(UserError, match="seat1"):
        TableLayout.from_dict({"zones": {"seat1": [10, 10, 5, 50]}})
    # seat1 moved over the kitty's right end: a card there would count for one only.
    with pytest.raises(UserError) as overlap:
        TableLayout.from_dict({"zones": {"seat1": [500, 170, 810, 290]}})
    assert "zones 'seat1' and 'kitty' overlap (x 500-520 mm, y 170-290 mm)" in str(overlap.value)
    # Zones that only touch are apart.
    TableLayout.from_dict({"zones": {"seat1": [520, 170, 810, 290]}})


def test_bad_calibration_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="calibrate"):
        load(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    with pytest.raises(UserError, match="not a calibration"):
        load(bad)
