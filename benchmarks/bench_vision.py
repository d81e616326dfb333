"""Card-vision benchmark: accuracy on held-out designs and time per 1280x720 frame.

Renders scenes of every held-out aisleriot design (never used in training or
tuning), reads them, and prints per design: per-card rank accuracy, share of plays
read entirely right, invented readings per card, red/black joker swaps, and the wrong
or invented readings made surely (which a referee must never give); then the
median milliseconds per frame on one core. ``--laid joker-pairs dou-dizhu`` also scores
scenes of chosen plays: fanned pairs of red and of black jokers (four players play with
two decks), and a bomb, a chain of pairs, a triple with one and a pair of one suit.

    .venv/bin/python benchmarks/bench_vision.py --scenes 40 --seed 7

``--size 1920x1080 --view 0.67 --camera`` reads a loosely framed 1080p camera's frames as the
camera's reader does, through the calibration's window around the table.

``--themes`` also takes the project's own and typeset decks (``own3``, ``font20``): the
training decks, on which the reader's choices are made.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import json
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import cv2
import numpy as np

from table.cli import number_between
from table.errors import UserError
from table.vision.calibration import Calibration, TableLayout
from table.vision.evaluate import Score, score_scene
from table.vision.faces import HELD_OUT_THEMES, THEME_DIR, is_drawn
from table.vision.memory import DeckMemory
from table.vision.recognize import Convnet, Model, load_convnet, load_model, read_cards
from table.vision.synth import Scene, render_table
from table.vision.train import random_layout

Layout = Callable[[np.random.Generator], Mapping[str, Sequence[Sequence[str]]]]
"""Lays the plays of one scene from its random generator."""


def scene(
    first: int,
    seed: int,
    place: int,
    i: int,
    theme: str,
    lay: Layout = random_layout,
    arm: bool = False,
    size: tuple[int, int] = (1280, 720),
    view: float = 1.0,
) -> tuple[np.ndarray, Scene]:
    """Renders scene ``i`` of one theme, the same whichever other themes are scored.

    ``first`` sets apart the scenes of each kind of figure; ``place`` is the theme's
    place in ``HELD_OUT_THEMES`` (or in the list given, for a theme not held out);
    ``arm`` puts an arm over the table in 30 % of the scenes; ``size`` is the frame's,
    of the same view of the table at any size, which ``view`` scales (0.67 at 1920x1080:
    a camera framing the table loosely, its cards as large as at 1280x720).
    """
    scene_seed = first + seed * 100_000 + place * 1000 + i
    rng = np.random.default_rng(scene_seed)
    layout = lay(rng)
    return render_table(
        layout,
        seed=scene_seed,
        deck=theme,
        hand=arm and bool(rng.random() < 0.3),
        px_per_mm=float(rng.uniform(1.27, 1.9)) * view,
        size=size,
    )


def run(
    themes: list[str],
    scenes: int,
    seed: int,
    model: Model | None = None,
    memory: bool = False,
    convnet: Convnet | None = None,
    size: tuple[int, int] = (1280, 720),
    view: float = 1.0,
    camera: bool = False,
) -> dict[str, dict[str, object]]:
    """Scores ``scenes`` scenes per theme, in frames of ``size`` and ``view``
    (:func:`scene`), and returns the figures per theme and in total.

    With ``camera``, each frame is read as the camera's reader reads it: only its
    calibration's reading window, the calibration being the scene's own homography (as
    ``vision calibrate`` finds it from the markers, which a close view leaves out).

    A held-out theme's scenes depend only on its place in ``HELD_OUT_THEMES``, not on
    which other themes are scored. With ``memory``, each theme's scenes are read in
    turn with one deck memory, as the camera reads one deck's frames.
    """
    cv2.setNumThreads(1)
    model = model or load_model()
    results: dict[str, dict[str, object]] = {}
    total = Score()
    times: list[float] = []
    for place, theme in enumerate(themes):
        score = Score()
        deck = DeckMemory() if memory else None
        for i in range(scenes):
            image, truth = scene(
                10_000_000, seed, _place(theme, place), i, theme, arm=True, size=size, view=view
            )
            window = None
            if camera:
                table = Calibration(np.linalg.inv(truth.table_to_image), size, TableLayout())
                window = table.reading_window()
            start = time.perf_counter()
            found = read_cards(image, model, deck, convnet, window)
            times.append(time.perf_counter() - start)
            score.add(score_scene(truth, found))
        results[theme] = score.to_dict()
        total.add(score)
        print(
            f"{theme:14s} cards {score.cards:5d}  rank acc {score.accuracy:.4f}  "
            f"plays {score.play_accuracy:.4f}  invented {score.invented_rate:.4f}  "
            f"joker swaps {score.joker_swaps}  sure misreadings {score.sure_wrong}",
            flush=True,
        )
    results["all"] = total.to_dict()
    results["all"]["ms_per_frame_median"] = round(1000 * float(np.median(times)), 2)
    print(
        f"{'all':14s} cards {total.cards:5d}  rank acc {total.accuracy:.4f}  "
        f"plays {total.play_accuracy:.4f}  invented {total.invented_rate:.4f}  "
        f"joker swaps {total.joker_swaps}  sure misreadings {total.sure_wrong}"
    )
    print(f"median {1000 * np.median(times):.1f} ms per {size[0]}x{size[1]} frame on one core")
    return results


FOREIGN_THEMES = ("ancient_french", "berlin", "lattmann", "rheinland", "tarocco")
"""Held-out designs whose court cards carry no English index: B D K (berlin, lattmann,
rheinland), V D R with a 1 for the ace (ancient_french), F D R (tarocco)."""


def foreign(
    themes: list[str],
    scenes: int,
    seed: int,
    model: Model | None = None,
    convnet: Convnet | None = None,
) -> dict[str, dict[str, object]]:
    """Scores the foreign-index designs, counting apart the sure readings that are wrong.

    A sure misreading is what a referee must never give: a card it cannot read must be
    reported unsure or not at all.
    """
    model = model or load_model()
    out: dict[str, dict[str, object]] = {}
    for t, theme in enumerate(themes):
        score = Score()
        for i in range(scenes):
            image, truth = scene(20_000_000, seed, t, i, theme)
            score.add(score_scene(truth, read_cards(image, model, convnet=convnet)))
        out[theme] = score.to_dict()
        print(
            f"{theme:14s} cards {score.cards:4d}  rank acc {score.accuracy:.4f}  "
            f"sure misreadings {score.sure_wrong} (should be 0)",
            flush=True,
        )
    return out


CHAIN_RANKS = "3456789TJQKA"
"""Ranks a chain may hold, from which the plays of ``dou_dizhu_plays`` are drawn."""


def joker_pairs(rng: np.random.Generator) -> Mapping[str, Sequence[Sequence[str]]]:
    """Lays a fanned pair of red and one of black jokers (four players, two decks)."""
    return {"seat0": [["R", "R"]], "seat2": [["B", "B"]]}


def dou_dizhu_plays(rng: np.random.Generator) -> Mapping[str, Sequence[Sequence[str]]]:
    """Lays plays of Dou Dizhu: a bomb, a chain of three pairs, a triple with one, and a
    pair of one suit as two decks give it."""
    r = [CHAIN_RANKS[int(i)] for i in rng.permutation(len(CHAIN_RANKS))]
    suit = "hsdc"[int(rng.integers(4))]
    return {
        "seat0": [[r[0] + s for s in "hsdc"]],
        "seat1": [[r[1] + "h", r[1] + "s", r[2] + "d", r[2] + "c", r[3] + "h", r[3] + "c"]],
        "seat2": [[r[4] + "h", r[4] + "s", r[4] + "d", r[5] + "c"]],
        "kitty": [[r[6] + suit, r[6] + suit]],
    }


LAID_PLAYS: dict[str, Layout] = {"joker-pairs": joker_pairs, "dou-dizhu": dou_dizhu_plays}
"""Scenes of chosen plays, where random layouts seldom put cards of one rank together."""


def laid(
    name: str,
    themes: list[str],
    scenes: int,
    seed: int,
    model: Model | None = None,
    memory: bool = False,
    convnet: Convnet | None = None,
) -> dict[str, dict[str, object]]:
    """Scores scenes of the plays ``LAID_PLAYS[name]`` lays, per theme and in total (with
    ``memory``, each theme's scenes in turn with one deck memory)."""
    model = model or load_model()
    out: dict[str, dict[str, object]] = {}
    total = Score()
    for place, theme in enumerate(themes):
        score = Score()
        deck = DeckMemory() if memory else None
        for i in range(scenes):
            image, truth = scene(30_000_000, seed, _place(theme, place), i, theme, LAID_PLAYS[name])
            score.add(score_scene(truth, read_cards(image, model, deck, convnet)))
        out[theme] = score.to_dict()
        total.add(score)
        print(f"{theme:14s} {name}: {_laid_line(score)}", flush=True)
    out["all"] = total.to_dict()
    print(f"{'all':14s} {name}: {_laid_line(total)}")
    return out


def laid_scenes(scenes: int) -> int:
    """Returns how many scenes of chosen plays are scored per design: a third of the random ones."""
    return max(1, scenes // 3)


def _place(theme: str, place: int) -> int:
    """Returns a theme's place for its scene seeds: in ``HELD_OUT_THEMES`` if held out."""
    return HELD_OUT_THEMES.index(theme) if theme in HELD_OUT_THEMES else place


def _laid_line(score: Score) -> str:
    """Returns one line of figures for scenes of laid plays."""
    return (
        f"{score.right} of {score.cards} cards right, {score.plays_right} of {score.plays} "
        f"plays, invented {score.invented}, joker swaps {score.joker_swaps}, "
        f"sure misreadings {score.sure_wrong}"
    )


def frame_size(text: str) -> tuple[int, int]:
    """Parses ``WIDTHxHEIGHT`` (``1920x1080``)."""
    try:
        width, height = (int(part) for part in text.lower().split("x"))
    except ValueError:
        message = f"{text!r} is not a frame size such as 1920x1080"
        raise argparse.ArgumentTypeError(message) from None
    if width < 320 or height < 180:
        raise argparse.ArgumentTypeError(f"{text!r} is too small a frame: at least 320x180")
    return width, height


def main() -> int:
    """Parses the options and runs the benchmark."""
    parser = argparse.ArgumentParser(description="card-vision accuracy and speed benchmark")
    parser.add_argument("--scenes", type=int, default=40, help="scenes per design")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--themes", nargs="*", default=list(HELD_OUT_THEMES))
    parser.add_argument("--json", help="also write the figures to this JSON file")
    parser.add_argument(
        "--size",
        type=frame_size,
        default=(1280, 720),
        help="frame size of the random plays, WIDTHxHEIGHT, the same view of the table "
        "(default 1280x720)",
    )
    parser.add_argument(
        "--view",
        type=number_between(0.25, 2),
        default=1.0,
        help="scale of the table in the frame against the default view (0.67 with --size "
        "1920x1080: a loosely framed 1080p camera)",
    )
    parser.add_argument(
        "--camera",
        action="store_true",
        help="read only each frame's reading window, as the camera's reader does",
    )
    parser.add_argument(
        "--foreign",
        action="store_true",
        help="also score the held-out designs with no English court index",
    )
    parser.add_argument(
        "--laid",
        nargs="*",
        choices=sorted(LAID_PLAYS),
        default=[],
        help="also score scenes of chosen plays (a third as many scenes per design)",
    )
    parser.add_argument(
        "--memory",
        action="store_true",
        help="read each design's scenes in turn with one deck memory, as the camera does",
    )
    parser.add_argument(
        "--model",
        type=Path,
        help="read with this model (one written by ddz-table vision learn) instead of the "
        "built-in one",
    )
    parser.add_argument(
        "--convnet",
        type=Path,
        help="give unsure marks the second opinion of this network (one written by "
        "python -m table.vision.train --convnet-out) instead of the built-in one",
    )
    args = parser.parse_args()
    try:
        model = load_model(args.model) if args.model else load_model()
        convnet = load_convnet(args.convnet) if args.convnet else load_convnet()
    except UserError as error:
        parser.error(str(error))
    themes = [t for t in args.themes if is_drawn(t) or (THEME_DIR / f"{t}.svgz").exists()]
    for theme in (t for t in args.themes if t not in themes):
        print(f"{theme}: no such theme in {THEME_DIR}, nor an own or typeset deck; skipped")
    results: dict[str, object] = dict(
        run(
            themes,
            args.scenes,
            args.seed,
            model,
            args.memory,
            convnet,
            args.size,
            args.view,
            args.camera,
        )
    )
    if args.foreign:
        present = [t for t in FOREIGN_THEMES if (THEME_DIR / f"{t}.svgz").exists()]
        results["foreign"] = foreign(present, max(1, args.scenes // 4), args.seed, model, convnet)
    for name in args.laid:
        scenes = laid_scenes(args.scenes)
        results[name] = laid(name, themes, scenes, args.seed, model, args.memory, convnet)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(results, handle, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
