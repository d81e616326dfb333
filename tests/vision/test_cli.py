"""The ``vision`` commands, run through their argparse registration."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import cv2
import pytest

from table.errors import UserError
from table.vision import cli
from table.vision.synth import render_table


def run(*argv: str) -> int:
    """Parses ``argv`` with only the vision commands registered and runs it."""
    parser = argparse.ArgumentParser(prog="ddz-table")
    commands = parser.add_subparsers(dest="command", required=True)
    cli.register(commands)
    args = parser.parse_args(list(argv))
    status: int = args.func(args)
    return status


@pytest.fixture
def scene_file(tmp_path: Path) -> Path:
    """A rendered table with three cards of the project's own deck."""
    image, _ = render_table({"seat0": "7h 8s 9d"}, seed=12, px_per_mm=1.4)
    path = tmp_path / "table.png"
    cv2.imwrite(str(path), image)
    return path


def test_markers_and_calibrate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sheet = tmp_path / "markers.png"
    assert run("vision", "markers", "--out", str(sheet)) == 0
    assert cv2.imread(str(sheet)) is not None
    image, _ = render_table({"seat0": "3"}, seed=5)
    frame = tmp_path / "frame.png"
    cv2.imwrite(str(frame), image)
    out, preview = tmp_path / "cal.json", tmp_path / "cal.png"
    assert run("vision", "calibrate", str(frame), "--out", str(out), "--preview", str(preview)) == 0
    assert json.loads(out.read_text())["layout"]["zones"]["kitty"]
    assert cv2.imread(str(preview)).shape == image.shape
    assert "calibration.json" not in capsys.readouterr().err


@pytest.mark.vision
def test_read_json_one_object_per_image(
    scene_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run("vision", "read", str(scene_file), str(scene_file), "--json") == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2
    cards = json.loads(lines[0])["cards"]
    assert sorted(c["card"] for c in cards) == ["7", "8", "9"]
    assert all({"card", "suit", "x", "y", "confidence"} <= c.keys() for c in cards)


@pytest.mark.vision
def test_show_writes_a_picture(scene_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "shown.png"
    assert run("vision", "show", str(scene_file), "--out", str(out)) == 0
    assert cv2.imread(str(out)).shape == cv2.imread(str(scene_file)).shape


@pytest.mark.vision
def test_render_then_eval(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "set"
    assert run("vision", "render", str(folder), "--deck", "own1", "--count", "2") == 0
    assert len(list(folder.glob("*.json"))) == 2
    capsys.readouterr()
    assert run("vision", "eval", str(folder), "--json") == 0
    score = json.loads(capsys.readouterr().out)
    assert score["cards"] > 0 and score["accuracy"] >= 0.8


def test_bad_inputs_are_user_errors(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="no image file"):
        run("vision", "read", str(tmp_path / "nothing.png"))
    with pytest.raises(UserError, match="not a directory"):
        run("vision", "eval", str(tmp_path / "nowhere"))
    blank = tmp_path / "blank.png"
    cv2.imwrite(str(blank), cv2.UMat(720, 1280, cv2.CV_8UC3, (80, 120, 60)).get())
    with pytest.raises(UserError, match="marker"):
        run("vision", "calibrate", str(blank), "--out", str(tmp_path / "c.json"))
    with pytest.raises(UserError, match="cannot open"):
        run("vision", "calibrate", "99")
