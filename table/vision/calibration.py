"""Table calibration: corner markers, the image-to-table homography and the play zones.

Table coordinates are millimetres on the table plane, origin at the outer corner of
marker 0, x to the right towards marker 1 and y down towards marker 3, as seen from
the camera. Four ArUco markers (``DICT_4X4_50`` ids 0..3) sit inside the table
rectangle at its corners, clockwise from the top left.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from table.errors import UserError
from table.vision.camera import CAMERA_SIZE
from table.vision.recognize import WORK_SIDE, Window

MARKER_DICTIONARY = cv2.aruco.DICT_4X4_50
MARKER_IDS = (0, 1, 2, 3)
CARD_MM = (63.0, 88.0)
"""A standard playing card's width and height."""
READ_CARD_PX = (80, 160)
"""Card widths, in pixels of the frame the card reader works on, that it reads well: on
training designs it read 94.6 % of the cards 80 px wide, 97-98 % from 100 to 140 px, 96.0 %
at 158 px, and under 93 % at 76 px or less and at 176 px (docs/vision.md, "Camera
resolution")."""

READ_COLOUR = (255, 255, 255)
"""The colour of the card reader's window in the calibration picture."""

Rect = tuple[float, float, float, float]
"""A zone: ``(x0, y0, x1, y1)`` in table millimetres."""


def _default_zones() -> dict[str, Rect]:
    """Seat zones around the kitty, seats counterclockwise from the camera's bottom edge."""
    return {
        "seat0": (230.0, 300.0, 590.0, 450.0),
        "seat1": (620.0, 90.0, 810.0, 370.0),
        "seat2": (230.0, 10.0, 590.0, 160.0),
        "seat3": (10.0, 90.0, 200.0, 370.0),
        "kitty": (300.0, 170.0, 520.0, 290.0),
    }


@dataclass(frozen=True)
class TableLayout:
    """Size of the table plane, of its corner markers, and the zone rectangles."""

    width_mm: float = 820.0
    height_mm: float = 460.0
    marker_mm: float = 40.0
    zones: dict[str, Rect] = field(default_factory=_default_zones)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TableLayout:
        """Builds a layout from a config section (a TOML ``[vision]`` table or JSON).

        :raises UserError: when a zone is not four numbers with x0 < x1 and y0 < y1.
        """
        default = cls()
        zones = dict(default.zones)
        for name, rect in dict(data.get("zones", {})).items():
            try:
                x0, y0, x1, y1 = (float(v) for v in rect)
            except (TypeError, ValueError) as error:
                raise UserError(
                    f"zone {name!r} must be four numbers x0, y0, x1, y1 in mm; got {rect!r}"
                ) from error
            if not (x0 < x1 and y0 < y1):
                raise UserError(f"zone {name!r} is empty: need x0 < x1 and y0 < y1 (mm)")
            zones[str(name)] = (x0, y0, x1, y1)
        _refuse_overlaps(zones)
        return cls(
            width_mm=float(data.get("width_mm", default.width_mm)),
            height_mm=float(data.get("height_mm", default.height_mm)),
            marker_mm=float(data.get("marker_mm", default.marker_mm)),
            zones=zones,
        )

    def to_dict(self) -> dict[str, Any]:
        """Returns the layout as plain data for JSON or TOML."""
        return {
            "width_mm": self.width_mm,
            "height_mm": self.height_mm,
            "marker_mm": self.marker_mm,
            "zones": {name: list(rect) for name, rect in self.zones.items()},
        }

    def marker_corners(self) -> dict[int, np.ndarray]:
        """Returns each marker's four corners in table mm, in ArUco corner order."""
        m, w, h = self.marker_mm, self.width_mm, self.height_mm
        origins = {0: (0.0, 0.0), 1: (w - m, 0.0), 2: (w - m, h - m), 3: (0.0, h - m)}
        return {
            marker: np.array([[x, y], [x + m, y], [x + m, y + m], [x, y + m]], np.float32)
            for marker, (x, y) in origins.items()
        }


def _refuse_overlaps(zones: Mapping[str, Rect]) -> None:
    """Refuses two zones that overlap: a card laid where they do would count for one
    of them only, whichever comes first.

    :raises UserError: naming the two zones and where they overlap.
    """
    names = list(zones)
    for i, first in enumerate(names):
        for second in names[i + 1 :]:
            (ax0, ay0, ax1, ay1), (bx0, by0, bx1, by1) = zones[first], zones[second]
            x0, y0, x1, y1 = max(ax0, bx0), max(ay0, by0), min(ax1, bx1), min(ay1, by1)
            if x0 < x1 and y0 < y1:
                raise UserError(
                    f"zones {first!r} and {second!r} overlap (x {x0:g}-{x1:g} mm, y"
                    f" {y0:g}-{y1:g} mm): a card laid there would count for one of them"
                    " only; move an edge of one so that they do not"
                )


@dataclass(frozen=True)
class Calibration:
    """A homography from image pixels to table millimetres, with its layout."""

    homography: np.ndarray
    image_size: tuple[int, int]
    layout: TableLayout

    def to_table(self, points: np.ndarray) -> np.ndarray:
        """Maps ``(n, 2)`` image points to table mm."""
        pts = np.asarray(points, np.float64).reshape(-1, 1, 2)
        return cv2.perspectiveTransform(pts, self.homography).reshape(-1, 2)

    def to_image(self, points: np.ndarray) -> np.ndarray:
        """Maps ``(n, 2)`` table-mm points to image pixels."""
        pts = np.asarray(points, np.float64).reshape(-1, 1, 2)
        inverse = np.linalg.inv(self.homography)
        return cv2.perspectiveTransform(pts, inverse).reshape(-1, 2)

    def outline(self, rect: Rect) -> np.ndarray:
        """Maps a table rectangle to its four image corners, clockwise from the top left."""
        x0, y0, x1, y1 = rect
        return self.to_image(np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]]))

    def zone_of(self, point: tuple[float, float]) -> str | None:
        """Names the zone holding an image point, or ``None`` outside every zone."""
        x, y = self.to_table(np.array([point]))[0]
        for name, (x0, y0, x1, y1) in self.layout.zones.items():
            if x0 <= x <= x1 and y0 <= y <= y1:
                return name
        return None

    def px_per_mm(self) -> float:
        """Returns the frame's pixels per table millimetre at the table's centre."""
        cx, cy = self.layout.width_mm / 2, self.layout.height_mm / 2
        ends = self.to_image(np.array([[cx - 5, cy], [cx + 5, cy], [cx, cy - 5], [cx, cy + 5]]))
        along = np.linalg.norm(ends[1] - ends[0])
        down = np.linalg.norm(ends[3] - ends[2])
        return float(along + down) / 20

    def reading_window(self) -> Window:
        """Returns the part of the frame the camera's card reader reads: every zone grown
        by a card's height, so a card lying over a zone's edge is read whole, within the
        frame.

        Readings outside the zones are dropped anyway; cutting the rest away keeps a frame
        that shows more than the table from being shrunk for it (a 1920x1080 frame with
        the table in its middle 1270 px is read at its own size, not shrunk to 1280 px).
        """
        zones = np.array(list(self.layout.zones.values()), np.float64)
        x0, y0 = zones[:, :2].min(axis=0) - CARD_MM[1]
        x1, y1 = zones[:, 2:].max(axis=0) + CARD_MM[1]
        corners = self.outline((x0, y0, x1, y1))
        left, top = np.maximum(np.floor(corners.min(axis=0)), 0).astype(int)
        right, bottom = np.minimum(np.ceil(corners.max(axis=0)), self.image_size).astype(int)
        return (int(left), int(top), int(right), int(bottom))

    def read_card_width(self) -> float:
        """Returns a card's width in pixels of the frame as the card reader reads it: its
        reading window, shrunk to ``WORK_SIDE`` when larger."""
        left, top, right, bottom = self.reading_window()
        shrink = min(1.0, WORK_SIDE / max(right - left, bottom - top, 1))
        return CARD_MM[0] * self.px_per_mm() * shrink

    def card_size_problem(self) -> str | None:
        """Says what to change when the card reader would see cards smaller or larger than
        it reads well (``READ_CARD_PX``); ``None`` when they suit it."""
        width, (least, most) = self.read_card_width(), READ_CARD_PX
        seen = f"cards are about {width:.0f} px wide to the card reader, which reads them well at"
        if width < least:
            small_frame = max(self.image_size) < WORK_SIDE
            mode = "x".join(map(str, CAMERA_SIZE))
            return (
                f"{seen} {least}-{most}: lower the camera or zoom in"
                + (f", or use a camera mode of {mode} or more" if small_frame else "")
                + ", then calibrate again"
            )
        if width > most:
            return f"{seen} {least}-{most}: raise the camera or zoom out, then calibrate again"
        return None

    def zone_problem(self) -> str | None:
        """Names the zones that lie partly outside the frame, whose cards there the camera
        cannot read, and says what to change; ``None`` when every zone is in view."""
        width, height = self.image_size
        outside = []
        for name, rect in self.layout.zones.items():
            corners = self.outline(rect)
            xs, ys = corners[:, 0], corners[:, 1]
            if xs.min() < 0 or ys.min() < 0 or xs.max() > width or ys.max() > height:
                outside.append(name)
        if not outside:
            return None
        return (
            f"zone(s) {', '.join(outside)} lie partly outside the camera's view, so cards"
            " played there may not be read: move the camera back, or the zones in the"
            " config's [vision] section, then calibrate again"
        )

    def frame_size_problem(self, frame: np.ndarray) -> str | None:
        """Says what to do when a frame is not of the size the table was calibrated on, as
        its zones would then lie elsewhere in it; ``None`` when it is."""
        height, width = frame.shape[:2]
        if (width, height) == self.image_size:
            return None
        calibrated = "x".join(map(str, self.image_size))
        return (
            f"the camera gives {width}x{height} frames but the table was calibrated on"
            f" {calibrated} ones, so the seat zones would be wrong: set the camera to"
            f" {calibrated}, or run 'ddz-table vision calibrate' again"
        )

    def to_json(self) -> str:
        """Serialises the calibration; :func:`load` reads it back."""
        return json.dumps(
            {
                "homography": self.homography.tolist(),
                "image_size": list(self.image_size),
                "layout": self.layout.to_dict(),
            },
            indent=2,
        )

    def save(self, path: Path) -> None:
        """Writes the calibration as JSON."""
        Path(path).write_text(self.to_json() + "\n", encoding="utf-8")


def load(path: Path) -> Calibration:
    """Reads a calibration JSON file written by :meth:`Calibration.save`.

    :raises UserError: when the file is missing or not a calibration.
    """
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        homography = np.array(data["homography"], np.float64).reshape(3, 3)
        width, height = (int(v) for v in data["image_size"])
        layout = TableLayout.from_dict(data.get("layout", {}))
    except FileNotFoundError as error:
        raise UserError(
            f"no calibration at {path}; run 'ddz-table vision calibrate' first"
        ) from error
    except (ValueError, KeyError, TypeError) as error:
        raise UserError(f"{path} is not a calibration file ({error}); calibrate again") from error
    return Calibration(homography, (width, height), layout)


def marker_image(marker_id: int, pixels: int) -> np.ndarray:
    """Draws one marker as a square grey image of ``pixels`` side."""
    dictionary = cv2.aruco.getPredefinedDictionary(MARKER_DICTIONARY)
    return cv2.aruco.generateImageMarker(dictionary, marker_id, pixels)


def markers_sheet(layout: TableLayout, dpi: int = 300) -> np.ndarray:
    """Draws an A4 page (portrait) with the four markers at true size and their ids.

    Each marker has a white quiet zone; cut the page in four and tape marker ``i``
    at the corner named under it.
    """
    per_mm = dpi / 25.4
    page = np.full((round(297 * per_mm), round(210 * per_mm)), 255, np.uint8)
    side = round(layout.marker_mm * per_mm)
    names = ("top left", "top right", "bottom right", "bottom left")
    for marker in MARKER_IDS:
        col, row = marker % 2, marker // 2
        cx = round((52.5 + 105 * col) * per_mm)
        cy = round((74.25 + 148.5 * row) * per_mm)
        x0, y0 = cx - side // 2, cy - side // 2
        page[y0 : y0 + side, x0 : x0 + side] = marker_image(marker, side)
        label = f"marker {marker}: {names[marker]} ({layout.marker_mm:g} mm)"
        scale = 0.5 * per_mm / 5
        cv2.putText(
            page,
            label,
            (x0 - side // 3, y0 + side + round(12 * per_mm)),
            cv2.FONT_HERSHEY_SIMPLEX,
            scale,
            0,
            max(1, round(scale * 2)),
            cv2.LINE_AA,
        )
    return page


def detect_markers(image: np.ndarray) -> dict[int, np.ndarray]:
    """Finds the corner markers in a frame: id to its four image corners."""
    if image is None or image.size == 0:
        raise UserError("the frame is empty; check the camera or the image file")
    gray = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    dictionary = cv2.aruco.getPredefinedDictionary(MARKER_DICTIONARY)
    params = cv2.aruco.DetectorParameters()
    # Corner markers often sit near the frame edge; the default margin drops them.
    params.minDistanceToBorder = 0
    detector = cv2.aruco.ArucoDetector(dictionary, params)
    corners, ids, _ = detector.detectMarkers(gray)
    found: dict[int, np.ndarray] = {}
    if ids is None:
        return found
    for marker_corners, marker in zip(corners, ids.ravel(), strict=True):
        if int(marker) in MARKER_IDS:
            found[int(marker)] = np.asarray(marker_corners, np.float32).reshape(4, 2)
    return found


def calibrate(image: np.ndarray, layout: TableLayout | None = None) -> Calibration:
    """Computes the homography from the four corner markers seen in one frame.

    :raises UserError: when the frame is empty or a marker is not visible.
    """
    layout = layout or TableLayout()
    found = detect_markers(image)
    missing = [m for m in MARKER_IDS if m not in found]
    if missing:
        raise UserError(
            f"corner marker(s) {', '.join(map(str, missing))} not found in the frame; "
            "check that all four markers are visible, lit and flat "
            "(print them with 'ddz-table vision markers')"
        )
    table = layout.marker_corners()
    src = np.concatenate([found[m] for m in MARKER_IDS])
    dst = np.concatenate([table[m] for m in MARKER_IDS])
    homography, _ = cv2.findHomography(src, dst)
    if homography is None:
        raise UserError("the markers do not give a usable table plane; move the camera overhead")
    height, width = image.shape[:2]
    return Calibration(homography, (width, height), layout)


def draw_zones(image: np.ndarray, calibration: Calibration) -> np.ndarray:
    """Returns a copy of the frame with the table outline and every zone drawn and named,
    and the card reader's window: a card outside it is not read."""
    out = image.copy() if image.ndim == 3 else cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
    left, top, right, bottom = calibration.reading_window()
    cv2.rectangle(out, (left, top), (right - 1, bottom - 1), READ_COLOUR, 1)
    font = cv2.FONT_HERSHEY_SIMPLEX
    cv2.putText(out, "cards read here", (left + 4, bottom - 8), font, 0.6, READ_COLOUR, 1)
    layout = calibration.layout
    w, h = layout.width_mm, layout.height_mm
    table = calibration.outline((0.0, 0.0, w, h))
    cv2.polylines(out, [table.round().astype(np.int32)], True, (255, 200, 0), 2, cv2.LINE_AA)
    for name, rect in layout.zones.items():
        pts = calibration.outline(rect).round().astype(np.int32)
        colour = (0, 215, 255) if name == "kitty" else (0, 0, 255)
        cv2.polylines(out, [pts], True, colour, 2, cv2.LINE_AA)
        x, y = pts.min(axis=0)
        cv2.putText(out, name, (int(x) + 4, int(y) + 22), cv2.FONT_HERSHEY_SIMPLEX, 0.7, colour, 2)
    return out
