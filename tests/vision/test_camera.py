"""The camera adapter: image files, video files, and sources that fail or stop."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from table.errors import UserError
from table.vision.camera import CAMERA_SIZE, Camera, CameraStopped, read_image


def test_image_files_give_one_frame_each(tmp_path: Path) -> None:
    paths = []
    for i in range(2):
        path = tmp_path / f"f{i}.png"
        cv2.imwrite(str(path), np.full((20, 30, 3), i * 50, np.uint8))
        paths.append(path)
    with Camera(paths) as camera:
        frames = list(camera.frames())
    assert [f[0, 0, 0] for f in frames] == [0, 50]


def test_video_file_ends_cleanly(tmp_path: Path) -> None:
    path = tmp_path / "clip.avi"
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 10, (64, 48))
    for i in range(5):
        writer.write(np.full((48, 64, 3), 40 * i, np.uint8))
    writer.release()
    with Camera(str(path)) as camera:
        assert len(list(camera.frames())) == 5


def test_missing_sources_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="does not exist"):
        Camera(str(tmp_path / "none.mp4"))
    with pytest.raises(UserError, match="no image file"):
        read_image(tmp_path / "none.png")
    junk = tmp_path / "junk.png"
    junk.write_bytes(b"not an image")
    with pytest.raises(UserError, match="not an image"):
        read_image(junk)


def test_live_source_that_stops_raises_camera_stopped(tmp_path: Path) -> None:
    path = tmp_path / "clip.avi"
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 10, (64, 48))
    writer.write(np.zeros((48, 64, 3), np.uint8))
    writer.release()
    camera = Camera(str(path))
    # A live source (index or URL) has no end: an empty read means it stopped.
    camera._live = True
    camera.read()
    with pytest.raises(CameraStopped, match="stopped sending frames"):
        camera.read()
    camera.close()


class RecordingCapture:
    """Stands in for a USB camera's ``cv2.VideoCapture``, which this machine has none of."""

    def __init__(self, index: int) -> None:
        self.index = index
        self.asked: dict[int, float] = {}

    def set(self, prop: int, value: float) -> bool:
        self.asked[prop] = value
        return True

    def isOpened(self) -> bool:
        return True

    def release(self) -> None:
        pass


def test_a_usb_camera_is_asked_for_the_readers_frame_size(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cv2, "VideoCapture", RecordingCapture)
    camera = Camera("0")
    capture = camera._capture
    assert isinstance(capture, RecordingCapture) and capture.index == 0
    assert capture.asked == {
        cv2.CAP_PROP_FRAME_WIDTH: CAMERA_SIZE[0],
        cv2.CAP_PROP_FRAME_HEIGHT: CAMERA_SIZE[1],
    }
    camera.close()
