"""The ``ddz-table vision`` commands: markers, calibrate, read, show, render, eval, learn."""

from __future__ import annotations

import argparse
import json
import tomllib
from pathlib import Path

import cv2
import numpy as np

from table.cli import positive_int
from table.errors import UserError
from table.vision.calibration import (
    Calibration,
    TableLayout,
    calibrate,
    draw_zones,
    markers_sheet,
)
from table.vision.calibration import load as load_calibration
from table.vision.camera import Camera, read_image
from table.vision.capture import (
    LEARN_ORDER,
    SHEET_NAME,
    cut_cards,
    out_of_order,
    save_deck,
    spoken,
)
from table.vision.memory import DeckMemory
from table.vision.recognize import (
    MODEL_PATH,
    SURE,
    Detection,
    Model,
    Window,
    load_model,
    read_cards,
)
from table.vision.train import LEARN_EPOCHS, LEARN_SCENES, LEARN_SEED, fine_tune


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Adds ``vision`` and its sub-commands to the top-level sub-parsers."""
    vision = commands.add_parser("vision", help="camera set-up and card reading")
    sub = vision.add_subparsers(dest="vision_command", required=True, metavar="ACTION")

    p = sub.add_parser("markers", help="write the printable sheet of the four corner markers")
    p.add_argument("--out", type=Path, default=Path("ddz-markers.png"))
    p.add_argument("--config", type=Path, help="TOML file with a [vision] section")
    p.set_defaults(func=_markers)

    p = sub.add_parser("calibrate", help="find the markers, save the homography, draw the zones")
    p.add_argument("source", help="camera index, stream URL, video or image file")
    p.add_argument("--config", type=Path, help="TOML file with a [vision] section")
    p.add_argument("--out", type=Path, default=Path("calibration.json"))
    p.add_argument("--preview", type=Path, default=Path("calibration.png"))
    p.set_defaults(func=_calibrate)

    p = sub.add_parser("read", help="print the cards found in images")
    p.add_argument("images", nargs="+", type=Path)
    p.add_argument("--json", action="store_true", help="one JSON object per image")
    _model_option(p)
    _calibration_option(p)
    p.set_defaults(func=_read)

    p = sub.add_parser("show", help="draw every card's box and reading on an image")
    p.add_argument("image", type=Path)
    p.add_argument("--out", type=Path, help="default: IMAGE-cards.png")
    _model_option(p)
    _calibration_option(p)
    p.set_defaults(func=_show)

    p = sub.add_parser("render", help="render table scenes with ground truth (an eval set)")
    p.add_argument("directory", type=Path)
    p.add_argument("--deck", action="append", help="design name (repeatable); default own0")
    p.add_argument("--count", type=int, default=10, help="scenes per design")
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(func=_render)

    p = sub.add_parser("eval", help="score readings against the truth files in a directory")
    p.add_argument("directory", type=Path)
    p.add_argument("--json", action="store_true")
    p.add_argument(
        "--memory",
        action="store_true",
        help="read the images in name order with one deck memory, as the camera reads its "
        "frames (render one design per directory)",
    )
    _model_option(p)
    p.set_defaults(func=_eval)

    p = sub.add_parser(
        "learn",
        help="learn a deck shown once, a suit at a time, and write a reader model for it",
        description="Shows the reader one deck: five frames, each with cards laid apart, face "
        "up, in rows from the top left: the spades from 3 to 2, the hearts, the diamonds, "
        "the clubs (each 3 4 5 6 7 8 9 10 J Q K A 2), then the black and the red joker. "
        "Give five image files (or other sources), or one camera and lay each group "
        "when asked. Takes about 3 minutes on 2 cores.",
    )
    p.add_argument("sources", nargs="+", help="five images, or one camera index or stream URL")
    p.add_argument(
        "--deck", type=Path, default=Path("learnt-deck"), help="folder for the faces (learnt-deck)"
    )
    p.add_argument(
        "--out",
        type=Path,
        default=Path("learnt-model.npz"),
        help="model to write (learnt-model.npz); set [camera] model to it",
    )
    p.add_argument(
        "--scenes",
        type=positive_int,
        default=LEARN_SCENES,
        help=f"rendered scenes per network ({LEARN_SCENES})",
    )
    p.add_argument(
        "--epochs", type=positive_int, default=LEARN_EPOCHS, help=f"passes ({LEARN_EPOCHS})"
    )
    p.add_argument(
        "--seed", type=int, default=LEARN_SEED, help=f"seed of the scenes ({LEARN_SEED})"
    )
    p.add_argument("--workers", type=positive_int, default=2, help="rendering processes (2)")
    p.set_defaults(func=_learn)


def _model_option(parser: argparse.ArgumentParser) -> None:
    """Adds ``--model`` (a model written by ``vision learn``) to a reading command."""
    parser.add_argument(
        "--model", type=Path, default=MODEL_PATH, help="model from vision learn (default: built-in)"
    )


def load_layout(path: Path | None) -> TableLayout:
    """Reads the ``[vision]`` section of a TOML config, or the default layout.

    :raises UserError: when the file is missing or not valid TOML.
    """
    if path is None:
        return TableLayout()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as error:
        raise UserError(f"no config file {path}") from error
    except tomllib.TOMLDecodeError as error:
        raise UserError(f"{path} is not valid TOML: {error}") from error
    return TableLayout.from_dict(data.get("vision", {}))


def _write_image(path: Path, image: np.ndarray) -> None:
    """Writes an image, turning a failure into a readable error."""
    if not cv2.imwrite(str(path), image):
        raise UserError(
            f"cannot write {path}; check the folder exists and the suffix is .png or .jpg"
        )


def _markers(args: argparse.Namespace) -> int:
    """Writes the marker sheet."""
    _write_image(args.out, markers_sheet(load_layout(args.config)))
    print(f"wrote {args.out}: print at 100% scale on A4 and tape each marker at its corner")
    return 0


def _calibrate(args: argparse.Namespace) -> int:
    """Calibrates from the first frame of a source."""
    layout = load_layout(args.config)
    with Camera(args.source) as camera:
        try:
            frame = camera.read()
        except StopIteration as error:
            raise UserError(f"{args.source} gave no frame to calibrate from") from error
    calibration = calibrate(frame, layout)
    calibration.save(args.out)
    _write_image(args.preview, draw_zones(frame, calibration))
    print(f"wrote {args.out} and {args.preview}; check that the zones sit where the cards go")
    for problem in (calibration.zone_problem(), calibration.card_size_problem()):
        if problem is not None:
            print(f"warning: {problem}")
    return 0


def _calibration_option(p: argparse.ArgumentParser) -> None:
    """Adds ``--calibration``: read as the table's camera reads, around the table only."""
    p.add_argument(
        "--calibration",
        type=Path,
        help="read only the part of the image the table's camera reads (written by "
        "'vision calibrate'); show also draws its zones",
    )


def _window(calibration: Calibration | None, image: np.ndarray, path: Path) -> Window | None:
    """Returns the part of an image the camera's reader reads, or ``None`` for all of it.

    :raises UserError: when the image is not of the calibration's frame size.
    """
    if calibration is None:
        return None
    problem = calibration.frame_size_problem(image)
    if problem is not None:
        raise UserError(f"{path}: {problem}")
    return calibration.reading_window()


def _read(args: argparse.Namespace) -> int:
    """Reads each image and prints its cards."""
    model = load_model(args.model)
    calibration = load_calibration(args.calibration) if args.calibration else None
    for path in args.images:
        image = read_image(path)
        found = read_cards(image, model, window=_window(calibration, image, path))
        if args.json:
            print(json.dumps({"image": str(path), "cards": [d.to_dict() for d in found]}))
        else:
            listed = ", ".join(
                f"{d.card}{d.suit or ''}@({d.center[0]:.0f},{d.center[1]:.0f}) {d.confidence:.2f}"
                for d in found
            )
            print(f"{path}: {listed or 'no cards'}")
    return 0


def draw_detections(image: np.ndarray, found: list[Detection]) -> np.ndarray:
    """Returns a copy of the image with each reading's box and label drawn."""
    out = image.copy()
    for d in found:
        colour = (0, 200, 0) if d.confidence >= SURE else (0, 140, 255)
        pts = np.array(d.box, np.float32).round().astype(np.int32)
        cv2.polylines(out, [pts], True, colour, 2, cv2.LINE_AA)
        label = f"{d.card}{d.suit or ''} {d.confidence:.2f}"
        x, y = pts.min(axis=0)
        cv2.putText(
            out,
            label,
            (int(x), int(y) - 4),
            cv2.FONT_HERSHEY_SIMPLEX,
            0.5,
            (0, 0, 0),
            3,
            cv2.LINE_AA,
        )
        cv2.putText(
            out, label, (int(x), int(y) - 4), cv2.FONT_HERSHEY_SIMPLEX, 0.5, colour, 1, cv2.LINE_AA
        )
    return out


def _show(args: argparse.Namespace) -> int:
    """Draws the readings of one image."""
    model = load_model(args.model)
    calibration = load_calibration(args.calibration) if args.calibration else None
    image = read_image(args.image)
    found = read_cards(image, model, window=_window(calibration, image, args.image))
    out = args.out or args.image.with_name(args.image.stem + "-cards.png")
    seen = image if calibration is None else draw_zones(image, calibration)
    _write_image(out, draw_detections(seen, found))
    print(f"wrote {out}: {len(found)} cards (green: sure, orange: unsure)")
    return 0


def _render(args: argparse.Namespace) -> int:
    """Renders an evaluation set: NAME.png with NAME.json truth per scene."""
    from table.vision.synth import render_table
    from table.vision.train import random_layout

    args.directory.mkdir(parents=True, exist_ok=True)
    decks = args.deck or ["own0"]
    for deck in decks:
        for i in range(args.count):
            seed = args.seed * 100_000 + i
            rng = np.random.default_rng(seed)
            image, scene = render_table(
                random_layout(rng), seed=seed, deck=deck, hand=bool(rng.random() < 0.3)
            )
            stem = args.directory / f"{deck}-{seed:06d}"
            _write_image(stem.with_suffix(".png"), image)
            stem.with_suffix(".json").write_text(json.dumps(scene.to_dict()), encoding="utf-8")
    print(f"wrote {len(decks) * args.count} scenes to {args.directory}")
    return 0


def _eval(args: argparse.Namespace) -> int:
    """Scores every image of a directory against its truth file."""
    from table.vision.evaluate import Score, load_truth, pairs, score_scene

    model = load_model(args.model)
    memory = DeckMemory() if args.memory else None
    total = Score()
    for image_path, truth_path in pairs(args.directory):
        found = read_cards(read_image(image_path), model, memory)
        total.add(score_scene(load_truth(truth_path), found))
    if args.json:
        print(json.dumps(total.to_dict()))
    else:
        print(
            f"cards {total.cards}: rank accuracy {total.accuracy:.4f}, "
            f"plays right {total.play_accuracy:.4f}, invented {total.invented_rate:.4f} per card, "
            f"missed {total.missed}, wrong {total.wrong} ({total.sure_wrong} wrong or invented "
            f"surely), joker swaps {total.joker_swaps}"
        )
    return 0


GROUP_NAMES = ("spades", "hearts", "diamonds", "clubs", "jokers")
"""What each frame of ``vision learn`` shows, in ``LEARN_ORDER``."""
FRESH_FRAMES = 5
"""Frames read from a live camera after a prompt; the last is fresh, not one the driver kept."""


def _learn(args: argparse.Namespace) -> int:
    """Cuts the shown deck's faces, saves them, and fine-tunes the reader on them."""
    if len(args.sources) not in (1, len(LEARN_ORDER)):
        raise UserError(
            f"give {len(LEARN_ORDER)} images ({', '.join(GROUP_NAMES)}) or one camera; "
            f"got {len(args.sources)}"
        )
    if not args.out.parent.is_dir():
        raise UserError(f"cannot write {args.out}: no folder {args.out.parent}")
    if args.deck.exists() and not args.deck.is_dir():
        raise UserError(f"--deck {args.deck} is a file; give a folder for the faces")
    base = load_model()
    faces: dict[str, np.ndarray] = {}
    if len(args.sources) == 1:
        with Camera(args.sources[0]) as camera:
            for name, cards in zip(GROUP_NAMES, LEARN_ORDER, strict=True):
                faces.update(_shown_group(camera, name, cards, base))
    else:
        for source, name, cards in zip(args.sources, GROUP_NAMES, LEARN_ORDER, strict=True):
            with Camera(source) as camera:
                frame = _first_frame(camera, source)
            try:
                faces.update(_group_faces(frame, name, cards, base))
            except UserError as error:
                raise UserError(f"{source}: {error}") from error
    save_deck(faces, args.deck)
    print(
        f"wrote the {len(faces)} faces to {args.deck} (see {args.deck / SHEET_NAME}); "
        "fine-tuning the reader",
        flush=True,
    )
    model = fine_tune(
        base, str(args.deck.resolve()), args.scenes, args.epochs, args.seed, args.workers
    )
    try:
        model.save(args.out)
    except OSError as error:
        raise UserError(f"cannot write {args.out} ({error}); give --out a writable file") from error
    print(
        f"wrote {args.out}: read with --model {args.out}, or set [camera] model in the "
        "table's config"
    )
    return 0


def _first_frame(camera: Camera, source: str) -> np.ndarray:
    """Returns a source's first frame."""
    try:
        return camera.read()
    except StopIteration as error:
        raise UserError(f"{source} gave no frame") from error


def _group_faces(
    frame: np.ndarray, name: str, cards: tuple[str, ...], model: Model
) -> dict[str, np.ndarray]:
    """Cuts one group's faces, and warns of a card the reader surely reads as another."""
    shown = cut_cards(frame, len(cards))
    for place, read in out_of_order(shown, cards, read_cards(frame, model)):
        print(
            f"check the {name}: card {place} reads as {read}, not {spoken(cards[place - 1])}; "
            f"they should lie in the order {_order(cards)}",
            flush=True,
        )
    return {card: one.face for card, one in zip(cards, shown, strict=True)}


def _order(cards: tuple[str, ...]) -> str:
    """Says a group's cards in order: ``3 4 5 ... 2`` or ``black joker, red joker``."""
    return (", " if cards[0] in "BR" else " ").join(spoken(card) for card in cards)


def _shown_group(
    camera: Camera, name: str, cards: tuple[str, ...], model: Model
) -> dict[str, np.ndarray]:
    """Asks for one group of cards on the table until a frame shows them all apart."""
    while True:
        try:
            input(
                f"lay the {name} ({_order(cards)}) apart, face up, in rows from the top left; "
                "press Enter"
            )
        except EOFError as error:
            raise UserError(
                "no one at the keyboard to say when the cards lie; give five image files instead"
            ) from error
        frame = _first_frame(camera, camera.name)
        for _ in range(FRESH_FRAMES - 1 if camera.is_live else 0):
            frame = _first_frame(camera, camera.name)
        try:
            return _group_faces(frame, name, cards, model)
        except UserError as error:
            print(f"{error}; try again", flush=True)
