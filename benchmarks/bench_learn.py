"""Learn-this-deck benchmark: a held-out design read before and after it is shown once.

For each design: renders the five frames a person shows to ``ddz-table vision
learn`` (cards laid apart, seen by the table camera; a frame the capture refuses,
say for a glare spot between two cards, is taken again, as a person would), cuts the
faces, fine-tunes the reader on them, and scores the built-in and the learnt model on
the same scenes as ``bench_vision.py`` (same seed, same scenes of that design).

    .venv/bin/python benchmarks/bench_learn.py --themes bellot orell --scenes 30
    .venv/bin/python benchmarks/bench_learn.py --memory --laid joker-pairs dou-dizhu
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np
from bench_vision import LAID_PLAYS, laid, laid_scenes, run

from table.errors import UserError
from table.vision.capture import LEARN_ORDER, cut_cards, save_deck
from table.vision.faces import HELD_OUT_THEMES
from table.vision.recognize import load_model
from table.vision.synth import render_spread
from table.vision.train import LEARN_EPOCHS, LEARN_SCENES, LEARN_SEED, fine_tune

LEARN_PX_PER_MM = 1.6
"""Scale of the learning frames: a card about 100 px wide, the middle of the benchmark's."""
RETAKES = 20
"""Frames tried per group before giving up on a design."""


def shown_faces(theme: str) -> tuple[dict[str, np.ndarray], int]:
    """Returns the faces cut from the five learning frames of a design, and the retakes."""
    faces: dict[str, np.ndarray] = {}
    retakes = 0
    for k, cards in enumerate(LEARN_ORDER):
        for frame in range(RETAKES):
            image, _ = render_spread(
                list(cards), 500 + k, deck=theme, px_per_mm=LEARN_PX_PER_MM, frame=frame
            )
            try:
                shown = cut_cards(image, len(cards))
                faces.update((card, one.face) for card, one in zip(cards, shown, strict=True))
                break
            except UserError:
                retakes += 1
        else:
            raise SystemExit(f"{theme}: no clean frame of group {k + 1} in {RETAKES} takes")
    return faces, retakes


def main() -> int:
    """Learns each design and scores it before and after."""
    parser = argparse.ArgumentParser(description="learn-this-deck benchmark")
    parser.add_argument("--themes", nargs="+", default=list(HELD_OUT_THEMES))
    parser.add_argument("--scenes", type=int, default=30, help="scored scenes per design")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--learn-scenes", type=int, default=LEARN_SCENES, help="per network")
    parser.add_argument("--epochs", type=int, default=LEARN_EPOCHS)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--json", help="also write the figures to this JSON file")
    parser.add_argument(
        "--memory",
        action="store_true",
        help="also score the learnt model reading each design's scenes in turn with a deck memory",
    )
    parser.add_argument(
        "--laid",
        nargs="*",
        choices=sorted(LAID_PLAYS),
        default=[],
        help="also score the learnt model on scenes of chosen plays (as bench_vision.py --laid, "
        "whose figures are the built-in model's on the same scenes)",
    )
    args = parser.parse_args()
    base = load_model()
    results: dict[str, object] = {}
    for theme in args.themes:
        with tempfile.TemporaryDirectory() as folder:
            faces, retakes = shown_faces(theme)
            save_deck(faces, Path(folder))
            start = time.perf_counter()
            learnt = fine_tune(
                base, folder, args.learn_scenes, args.epochs, LEARN_SEED, args.workers
            )
            took = time.perf_counter() - start
            print(f"{theme}: learnt in {took:.0f} s ({retakes} frames taken again)", flush=True)
            before = run([theme], args.scenes, args.seed, base)
            after = run([theme], args.scenes, args.seed, learnt)
            figures = {
                "before": before[theme],
                "after": after[theme],
                "learn_seconds": round(took),
                "retakes": retakes,
            }
            if args.memory:
                remembered = run([theme], args.scenes, args.seed, learnt, memory=True)
                figures["after_with_memory"] = remembered[theme]
            scenes = laid_scenes(args.scenes)
            for name in args.laid:
                figures[f"{name}_after"] = laid(name, [theme], scenes, args.seed, learnt)[theme]
                if args.memory:
                    figures[f"{name}_after_with_memory"] = laid(
                        name, [theme], scenes, args.seed, learnt, memory=True
                    )[theme]
        results[theme] = figures
        print(
            f"{theme}: rank acc {before[theme]['accuracy']} -> {after[theme]['accuracy']}, "
            f"plays {before[theme]['play_accuracy']} -> {after[theme]['play_accuracy']}",
            flush=True,
        )
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(results, handle, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
