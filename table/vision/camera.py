"""The one adapter between frame sources and the vision code.

A source is a camera index (``"0"``), a stream URL (``rtsp://``, ``http://``), a
video file, or one or more image files. Everything else in ``table.vision`` only
sees BGR ``numpy`` frames.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from types import TracebackType

import cv2
import numpy as np

from table.errors import UserError

IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".bmp", ".webp", ".tif", ".tiff"}
CAMERA_SIZE = (1280, 720)
"""Frame size asked of a USB camera: the view the card reader is made for. Left alone, a
V4L2 camera keeps its driver's default, often 640x480, where rank marks are too small to
read; one that cannot give it picks its nearest size."""


class CameraStopped(UserError):
    """A live source stopped delivering frames (unplugged, stream dropped)."""


def read_image(path: Path | str) -> np.ndarray:
    """Reads one image file as a BGR frame.

    :raises UserError: when the file is missing or not an image.
    """
    path = Path(path)
    if not path.is_file():
        raise UserError(f"no image file {path}")
    image = cv2.imread(str(path), cv2.IMREAD_COLOR)
    if image is None or image.size == 0:
        raise UserError(f"{path} is not an image OpenCV can read (use PNG or JPEG)")
    return image


class Camera:
    """Frames from one source; use as a context manager or call :meth:`close`.

    >>> Camera("no-such-file.mp4")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    table.errors.UserError: cannot open video source 'no-such-file.mp4'; ...
    """

    def __init__(self, source: str | int | Sequence[str | Path]) -> None:
        self.name = str(source)
        self._images: list[Path] | None = None
        self._capture: cv2.VideoCapture | None = None
        self._live = False
        if not isinstance(source, (str, int)):
            self._images = [Path(p) for p in source]
            return
        text = str(source)
        if Path(text).suffix.lower() in IMAGE_SUFFIXES:
            self._images = [Path(text)]
            return
        if text.isdigit():
            self._capture = cv2.VideoCapture(int(text))
            self._capture.set(cv2.CAP_PROP_FRAME_WIDTH, CAMERA_SIZE[0])
            self._capture.set(cv2.CAP_PROP_FRAME_HEIGHT, CAMERA_SIZE[1])
            self._live = True
        else:
            self._live = "://" in text
            if not self._live and not Path(text).exists():
                raise UserError(
                    f"cannot open video source {text!r}; the file does not exist "
                    "(give a camera index such as 0, a stream URL or a video file)"
                )
            self._capture = cv2.VideoCapture(text)
        if not self._capture.isOpened():
            raise UserError(
                f"cannot open video source {text!r}; check that the camera is connected "
                "and not used by another program, or that the URL or file is right"
            )

    @property
    def is_live(self) -> bool:
        """Tells a camera or stream (frames keep coming, the driver buffers some) from a file."""
        return self._live

    def read(self) -> np.ndarray:
        """Returns the next frame.

        :raises CameraStopped: when a live source gives no frame.
        :raises StopIteration: at the end of a file or of the image list.
        """
        if self._images is not None:
            if not self._images:
                raise StopIteration
            return read_image(self._images.pop(0))
        assert self._capture is not None
        ok, frame = self._capture.read()
        if not ok or frame is None or frame.size == 0:
            if self._live:
                raise CameraStopped(
                    f"video source {self.name!r} stopped sending frames; "
                    "check the cable or the network and restart"
                )
            raise StopIteration
        return frame

    def frames(self) -> Iterator[np.ndarray]:
        """Yields frames until the source ends (a live source ends by raising)."""
        while True:
            try:
                frame = self.read()
            except StopIteration:
                return
            yield frame

    def close(self) -> None:
        """Releases the device or file."""
        if self._capture is not None:
            self._capture.release()
            self._capture = None

    def __enter__(self) -> Camera:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()
