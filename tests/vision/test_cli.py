"""The ``vision`` commands, run through their argparse registration."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from table.errors import UserError
from table.vision import calibration, cli
from table.vision.calibration import READ_COLOUR
from table.vision.capture import LEARN_ORDER, cut_cards
from table.vision.synth import render_spread, render_table


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
    captured = capsys.readouterr()
    assert "calibration.json" not in captured.err
    assert "warning" not in captured.out


def test_calibrate_warns_when_cards_are_too_small_to_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    image, _ = render_table({"seat0": "3"}, seed=5, size=(800, 450))
    frame = tmp_path / "frame.png"
    cv2.imwrite(str(frame), image)
    out, preview = tmp_path / "cal.json", tmp_path / "cal.png"
    assert run("vision", "calibrate", str(frame), "--out", str(out), "--preview", str(preview)) == 0
    assert out.is_file()
    warning = capsys.readouterr().out.splitlines()[-1]
    assert warning.startswith("warning: cards are about") and "lower the camera" in warning


def test_calibrate_warns_of_a_zone_the_camera_does_not_see_whole(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    image, _ = render_table({"seat0": "3"}, seed=5)
    frame, config = tmp_path / "frame.png", tmp_path / "table.toml"
    cv2.imwrite(str(frame), image)
    # seat1 runs 180 mm past the table's right edge, out of the camera's view.
    config.write_text("[vision.zones]\nseat1 = [620, 90, 1000, 370]\n", encoding="utf-8")
    out, preview = tmp_path / "cal.json", tmp_path / "cal.png"
    args = ("--config", str(config), "--out", str(out), "--preview", str(preview))
    assert run("vision", "calibrate", str(frame), *args) == 0
    assert json.loads(out.read_text())["layout"]["zones"]["seat1"] == [620, 90, 1000, 370]
    warnings = [x for x in capsys.readouterr().out.splitlines() if x.startswith("warning")]
    assert len(warnings) == 1
    assert "zone(s) seat1 lie partly outside the camera's view" in warnings[0]
    assert "move the camera back, or the zones" in warnings[0]


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
def test_read_and_show_with_a_calibration_read_as_the_tables_camera_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], loosely_framed_chain: np.ndarray
) -> None:
    image = loosely_framed_chain  # read whole, the 4 and the 7 are missed
    frame, table, preview = tmp_path / "frame.png", tmp_path / "cal.json", tmp_path / "cal.png"
    cv2.imwrite(str(frame), image)
    assert (
        run("vision", "calibrate", str(frame), "--out", str(table), "--preview", str(preview)) == 0
    )
    capsys.readouterr()
    assert run("vision", "read", str(frame), "--json", "--calibration", str(table)) == 0
    cards = json.loads(capsys.readouterr().out)["cards"]
    sure = sorted(c["card"] for c in cards if c["confidence"] >= 0.9)
    assert sure == sorted("3456789TJ")
    out = tmp_path / "shown.png"
    assert run("vision", "show", str(frame), "--out", str(out), "--calibration", str(table)) == 0
    left, top, _, bottom = calibration.load(table).reading_window()
    assert (cv2.imread(str(out))[top + 20 : bottom - 20, left] == READ_COLOUR).all()
    small = tmp_path / "small.png"
    cv2.imwrite(str(small), cv2.resize(image, (1280, 720)))
    with pytest.raises(
        UserError, match="1280x720 frames but the table was calibrated on 1920x1080"
    ):
        run("vision", "read", str(small), "--calibration", str(table))


@pytest.mark.vision
def test_render_then_eval(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "set"
    assert run("vision", "render", str(folder), "--deck", "own1", "--count", "2") == 0
    assert len(list(folder.glob("*.json"))) == 2
    capsys.readouterr()
    assert run("vision", "eval", str(folder), "--json") == 0
    score = json.loads(capsys.readouterr().out)
    assert score["cards"] > 0 and score["accuracy"] >= 0.8
    assert run("vision", "eval", str(folder), "--json", "--memory") == 0
    remembered = json.loads(capsys.readouterr().out)
    assert remembered["cards"] == score["cards"] and remembered["right"] >= score["right"]


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


def _shown_groups(
    design: str, groups: tuple[tuple[str, ...], ...] = LEARN_ORDER
) -> list[np.ndarray]:
    """The frames a person shows to ``vision learn``, retaken when a glare joins two cards."""
    shown = []
    for k, cards in enumerate(groups):
        for frame in range(10):
            image, _ = render_spread(list(cards), 40 + k, deck=design, px_per_mm=1.6, frame=frame)
            try:
                cut_cards(image, len(cards))
                break
            except UserError:
                continue
        shown.append(image)
    return shown


TINY = ("--scenes", "2", "--epochs", "1", "--workers", "1")
"""Fine-tuning options that only exercise the steps, in a second."""


def test_learn_cuts_the_shown_deck_and_writes_a_model_the_reader_takes(
    scene_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shown = []
    for k, image in enumerate(_shown_groups("own1")):
        shown.append(str(tmp_path / f"group{k}.png"))
        cv2.imwrite(shown[-1], image)
    deck, model = tmp_path / "deck", tmp_path / "model.npz"
    assert run("vision", "learn", *shown, "--deck", str(deck), "--out", str(model), *TINY) == 0
    assert len(list(deck.glob("*.png"))) == 54 + 1  # and the sheet of them, for a person
    out = capsys.readouterr().out
    assert f"wrote {model}" in out and f"see {deck / 'shown.png'}" in out
    assert "check the" not in out  # every card lay where it was asked for
    assert run("vision", "read", str(scene_file), "--json", "--model", str(model)) == 0
    cards = sorted(c["card"] for c in json.loads(capsys.readouterr().out)["cards"])
    assert cards == ["7", "8", "9"]


def test_learn_from_one_camera_asks_for_each_group_and_again_after_a_bad_frame(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    groups = _shown_groups("own2")
    empty = np.full_like(groups[0], 90)
    video = tmp_path / "shown.avi"
    writer = cv2.VideoWriter(str(video), cv2.VideoWriter_fourcc(*"MJPG"), 5, (1280, 720))
    for frame in [empty, *groups]:
        writer.write(frame)
    writer.release()
    prompts: list[str] = []
    monkeypatch.setattr("builtins.input", lambda text: prompts.append(text) or "")
    deck = tmp_path / "deck"
    argv = [str(video), "--deck", str(deck), "--out", str(tmp_path / "m.npz"), *TINY]
    assert run("vision", "learn", *argv) == 0
    assert [p.split(" (")[0] for p in prompts] == [
        "lay the spades",
        "lay the spades",
        "lay the hearts",
        "lay the diamonds",
        "lay the clubs",
        "lay the jokers",
    ]
    assert "lay the jokers (black joker, red joker) apart" in prompts[-1]
    assert "found 0 cards where 13 were expected" in capsys.readouterr().out
    assert len(list(deck.glob("??.png"))) == 52


def test_learn_names_the_frame_that_does_not_show_its_cards(tmp_path: Path) -> None:
    empty = tmp_path / "empty.png"
    cv2.imwrite(str(empty), cv2.UMat(720, 1280, cv2.CV_8UC3, (80, 120, 60)).get())
    with pytest.raises(UserError, match="give 5 images"):
        run("vision", "learn", str(empty), str(empty))
    with pytest.raises(UserError, match=f"{empty}: found 0 cards where 13 were expected"):
        run("vision", "learn", *[str(empty)] * 5, "--deck", str(tmp_path / "deck"))
    assert not (tmp_path / "deck").exists()
    with pytest.raises(UserError, match=r"cannot write .*: no folder"):
        run("vision", "learn", *[str(empty)] * 5, "--out", str(tmp_path / "no" / "m.npz"))
    with pytest.raises(UserError, match=r"--deck .* is a file; give a folder"):
        run("vision", "learn", *[str(empty)] * 5, "--deck", str(empty))


def test_learn_from_a_camera_without_a_keyboard_says_to_give_images(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    video = tmp_path / "shown.avi"
    writer = cv2.VideoWriter(str(video), cv2.VideoWriter_fourcc(*"MJPG"), 5, (1280, 720))
    writer.write(np.full((720, 1280, 3), 90, np.uint8))
    writer.release()

    def closed(prompt: str) -> str:
        raise EOFError

    monkeypatch.setattr("builtins.input", closed)
    with pytest.raises(UserError, match=r"no one at the keyboard .* give five image files"):
        run("vision", "learn", str(video), "--deck", str(tmp_path / "deck"))


def test_a_file_that_is_no_model_is_refused_with_a_message(
    scene_file: Path, tmp_path: Path
) -> None:
    garbage = tmp_path / "model.npz"
    garbage.write_text("not a model", encoding="utf-8")
    with pytest.raises(UserError, match=r"is not a card reader model .* ddz-table vision learn"):
        run("vision", "read", str(scene_file), "--model", str(garbage))
    with pytest.raises(UserError, match="is not a card reader model"):
        run("vision", "show", str(scene_file), "--model", str(tmp_path / "missing.npz"))


def test_learn_warns_of_cards_laid_out_of_order(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spades = list(LEARN_ORDER[0])
    spades[1], spades[4] = spades[4], spades[1]  # the 4 and the 7 swapped
    shown = []
    for k, image in enumerate(_shown_groups("own1", (tuple(spades), *LEARN_ORDER[1:]))):
        shown.append(str(tmp_path / f"group{k}.png"))
        cv2.imwrite(shown[-1], image)
    argv = [*shown, "--deck", str(tmp_path / "deck"), "--out", str(tmp_path / "m.npz"), *TINY]
    assert run("vision", "learn", *argv) == 0
    warnings = [x for x in capsys.readouterr().out.splitlines() if x.startswith("check the")]
    order = "they should lie in the order 3 4 5 6 7 8 9 10 J Q K A 2"
    assert warnings == [
        f"check the spades: card 2 reads as 7, not 4; {order}",
        f"check the spades: card 5 reads as 4, not 7; {order}",
    ]
