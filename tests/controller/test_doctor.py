"""``ddz-table doctor``: one line per part, a problem named with what to do."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from table.cli import main
from table.controller import cli as doctor_cli
from table.vision.calibration import TableLayout, calibrate
from table.vision.recognize import MODEL_PATH
from table.vision.synth import render_table


def _config(tmp_path: Path, model: str) -> Path:
    """A table with a SQLite log and no camera, panel or broker, reading with ``model``."""
    config = tmp_path / "table.toml"
    config.write_text(
        f'[log]\nurl = "sqlite:///{tmp_path / "log.sqlite3"}"\n[camera]\nmodel = "{model}"\n',
        encoding="utf-8",
    )
    return config


def test_doctor_accepts_a_learnt_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["doctor", "--config", str(_config(tmp_path, str(MODEL_PATH)))]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("card reader"))
    assert "ok" in line and "a model learnt for one deck, 3 networks" in line


def test_doctor_names_a_model_file_that_is_no_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    garbage = tmp_path / "learnt.npz"
    garbage.write_bytes(b"\x00" * 64)
    assert main(["doctor", "--config", str(_config(tmp_path, str(garbage)))]) == 1
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if x.startswith("card reader"))
    assert "PROBLEM" in line and "is not a card reader model" in line
    assert "database     ok" in out


def _camera_config(tmp_path: Path, image: np.ndarray, calibrated: np.ndarray) -> tuple[Path, Path]:
    """Writes a table whose camera is a file showing ``image``, calibrated on ``calibrated``;
    returns the config and the camera's file."""
    frame = tmp_path / "frame.png"
    cv2.imwrite(str(frame), image)
    calibrate(calibrated).save(tmp_path / "calibration.json")
    config = tmp_path / "table.toml"
    config.write_text(
        f'[log]\nurl = "sqlite:///{tmp_path / "log.sqlite3"}"\n'
        f'[camera]\nsource = "{frame}"\ncalibration = "{tmp_path / "calibration.json"}"\n',
        encoding="utf-8",
    )
    return config, frame


@pytest.mark.parametrize(
    ("size", "verdict"),
    [((1280, 720), "ok       "), ((800, 450), "PROBLEM  cards are about 56 px wide")],
)
def test_doctor_says_whether_the_camera_shows_cards_at_a_size_the_reader_reads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], size: tuple[int, int], verdict: str
) -> None:
    image, _ = render_table({"seat0": "345"}, seed=9, px_per_mm=1.45, size=size)
    config, _ = _camera_config(tmp_path, image, image)
    main(["doctor", "--config", str(config)])
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("calibration"))
    assert line.startswith(f"calibration  {verdict}"), line


def test_doctor_names_a_zone_the_camera_does_not_see_whole(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    image, _ = render_table({"seat0": "345"}, seed=9, px_per_mm=1.45)
    config, _ = _camera_config(tmp_path, image, image)
    zones = {**TableLayout().zones, "seat3": (-200.0, 90.0, 200.0, 370.0)}
    calibrate(image, TableLayout(zones=zones)).save(tmp_path / "calibration.json")
    main(["doctor", "--config", str(config)])
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("calibration"))
    assert line.startswith("calibration  PROBLEM  zone(s) seat3 lie partly outside"), line


def test_doctor_reads_one_frame_and_names_a_camera_mode_unlike_the_calibrations(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    calibrated, _ = render_table({"seat0": "345"}, seed=9, px_per_mm=1.45)
    image, _ = render_table({"seat0": "345"}, seed=9, px_per_mm=1.45 * 1.5, size=(1920, 1080))
    config, frame = _camera_config(tmp_path, image, calibrated)
    opened: list[str] = []
    one_frame = doctor_cli._one_frame

    def counted(source: str) -> np.ndarray:
        opened.append(source)
        return one_frame(source)

    monkeypatch.setattr(doctor_cli, "_one_frame", counted)
    assert main(["doctor", "--config", str(config)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert next(x for x in out if x.startswith("camera")).endswith("gives 1920x1080 frames")
    line = next(x for x in out if x.startswith("calibration"))
    assert line == (
        "calibration  PROBLEM  the camera gives 1920x1080 frames but the table was calibrated"
        " on 1280x720 ones, so the seat zones would be wrong: set the camera to 1280x720, or"
        " run 'ddz-table vision calibrate' again"
    )
    assert opened == [str(frame)]
