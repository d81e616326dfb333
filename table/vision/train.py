"""Trains the rank-mark networks (``model.npz``) on rendered scenes of the training designs.

Recipe (the same data set on any machine with the same Debian packages, and the same
weights on the same processor and numpy; three networks in 14 to 18 minutes on 2 cores,
then the convolutional second opinion, ``table.vision.train_convnet``)::

    bash scripts/train

``scripts/train`` first installs what the training designs need: the aisleriot themes,
the bonded theme (taken from the ``aisleriot`` package), ``rsvg-convert`` and the font
packages listed as ``FONT_PACKAGES`` in ``scripts/lib.sh``; then it runs
``python -m table.vision.train`` with its arguments (defaults: three networks, each on
3000 scenes of its own seed, 15 epochs, seed 0; the convolutional network on the crops
of all their scenes).

Only the designs the issue allows are used, in fixed shares of the scenes
(``DECK_MIX``): the aisleriot themes in ``TRAIN_THEMES``, the project's own decks in
Hershey fonts (``own0`` .. ``own11``) and typeset in the installed fonts (``font0`` ..
``font<n-1>``, see ``table.vision.typeset``; 40 % of them print a Polish, German or
French index). Scenes go through the same candidate
finder as the reader, so the network learns the crops it will see; the truth of each
scene labels every candidate (a whole rank mark in its upright quarter turn, or
background), and most crops are stretched, sheared or made bolder or lighter first
(``augment``).
"""

from __future__ import annotations

import argparse
import ctypes
import time
from functools import partial
from multiprocessing import Pool
from pathlib import Path
from typing import NamedTuple

import cv2
import numpy as np

from table.cli import positive_int
from table.vision.faces import OWN_DECKS, RANKS, SHEET_SUITS, THEME_DIR, TRAIN_THEMES
from table.vision.recognize import (
    CLASSES,
    CONVNET_PATH,
    CROP,
    MODEL_PATH,
    SUITS,
    Model,
    find_candidates,
    quarter_features,
    softmax,
)
from table.vision.synth import Scene, render_table
from table.vision.typeset import typeset_decks

BACKGROUND_KEEP = 0.6
"""Share of background (not a rank mark) samples kept; there are far more of them."""
CONVNET_EPOCHS = 2
"""Passes of the convolutional network over its samples (the three networks' scenes)."""
CONVNET_BACKGROUND = 0.4
"""Share of background candidates the convolutional network learns, each in a random turn."""
DECK_MIX = (0.2, 0.25, 0.55)
"""Shares of the scenes drawn from the training themes, the own decks and the typeset decks."""
AUGMENTED = 0.7
"""Share of the crops that ``augment`` changes."""
MARK_SIZE = (0.7, 1.35)
"""Size range, as shares of the mark's largest extent, of a candidate that is the whole mark."""
MARK_OFFSET = 0.35
"""Largest distance, in mark extents, from the mark's centre to a whole mark's candidate."""
MEMBERS = 3
"""Networks trained, member ``j`` on the scenes of seed ``seed + j``; the reader averages them."""
LEARNT_SHARE = 0.5
"""Share of the fine-tuning scenes laid with the learnt deck; the rest keep the training
mix, so that the reader does not forget how other decks look."""
FINE_RATE = 5e-4
"""Starting learning rate of a fine-tuning, a quarter of training's: it adjusts, not relearns."""
LEARN_SCENES = 600
"""Scenes each network is fine-tuned on when a deck is learnt (about a minute a network here)."""
LEARN_EPOCHS = 4
"""Passes over them. Chosen with plastic and anglo left out of training: 8 passes or 1200
scenes read 2 and 5 cards more of 1257, in twice the time."""
LEARN_SEED = 100
"""Seed of the fine-tuning scenes, apart from the seeds the networks were trained on."""
FLUSH = 1e-30
"""Weights and Adam moments smaller than this are set to 0 after each step. A dead unit's
weights decay towards 0 and would pass into float32's subnormal range, where an Intel
Xeon computes about 20 times slower: one network's fit took over 20 minutes there
instead of under 2, for the same weights (float16 keeps nothing that small)."""


def training_decks() -> list[tuple[float, list[str]]]:
    """Lists the training decks in groups, each with its share of the scenes.

    The groups are the installed training themes, the own decks and the available
    typeset decks (``DECK_MIX``); a group with no deck is left out and the others
    share its scenes.
    """
    themes = [t for t in TRAIN_THEMES if (THEME_DIR / f"{t}.svgz").exists()]
    groups = zip(DECK_MIX, (themes, list(OWN_DECKS), typeset_decks()), strict=True)
    return [(share, decks) for share, decks in groups if decks]


def augment(crops: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Returns the crops, most of them stretched, sheared and made bolder or lighter.

    A design's marks differ from the training designs' mostly in width, slant and
    stroke weight; drawing those at random teaches the network to look past them.
    """
    out = crops.copy()
    middle = np.array([CROP / 2, CROP / 2], np.float32)
    for i in np.nonzero(rng.random(len(out)) < AUGMENTED)[0]:
        wide, tall = np.exp(rng.uniform(-0.35, 0.35)), np.exp(rng.uniform(-0.15, 0.15))
        shape = np.array([[wide, rng.uniform(-0.2, 0.2)], [0, tall]], np.float32)
        warp = np.hstack([shape, (middle - shape @ middle)[:, None]])
        crop = cv2.warpAffine(out[i], warp, (CROP, CROP), borderMode=cv2.BORDER_REPLICATE)
        weight = rng.random()
        if weight < 0.25:
            crop = cv2.erode(crop, np.ones((2, 2), np.uint8))
        elif weight < 0.5:
            crop = cv2.dilate(crop, np.ones((2, 2), np.uint8))
        out[i] = crop
    return out


def random_layout(rng: np.random.Generator) -> dict[str, list[list[str]]]:
    """Deals random plays into random zones, with some zones holding two plays."""
    deck = [r + s for r in RANKS for s in SHEET_SUITS] + ["B", "R"]
    rng.shuffle(deck)
    zones = ["seat0", "seat1", "seat2", "seat3", "kitty"]
    chosen = rng.choice(zones, size=int(rng.integers(2, 6)), replace=False)
    out: dict[str, list[list[str]]] = {}
    for zone in chosen:
        plays = []
        for _ in range(1 + int(rng.random() < 0.3)):
            n = int(rng.integers(1, 11))
            plays.append([deck.pop() for _ in range(min(n, len(deck)))])
        out[str(zone)] = [p for p in plays if p]
    return out


def whole_mark(quad: np.ndarray, centres: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Tells which candidates are the whole mark of ``quad``: centred on it and of its size."""
    extent = max(np.linalg.norm(quad[1] - quad[0]), np.linalg.norm(quad[3] - quad[0]))
    offset = np.hypot(*(centres - quad.mean(axis=0)).T)
    return (
        (offset < MARK_OFFSET * extent)
        & (sizes > MARK_SIZE[0] * extent)
        & (sizes < MARK_SIZE[1] * extent)
    )


def label_candidates(
    scene: Scene, centres: np.ndarray, angles: np.ndarray, sizes: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Labels each candidate: class index, upright quarter turn (-1: none) and suit.

    A candidate is a rank mark only when it is that mark, centred on it and of its
    size. A candidate inside a mark that is only part of it (a stroke cut off by a
    thin ink cut) or more than it (the mark joined to its pip) gets class -1 and is
    left out of training, like one inside a mark only partly in view: as a label it
    would teach the network a design's own way of breaking or joining its marks, and
    the whole mark is found as a candidate of its own.
    """
    n = len(centres)
    cls = np.full(n, len(CLASSES), np.int64)
    quarter = np.full(n, -1, np.int64)
    suit = np.full(n, -1, np.int64)
    for card in scene.cards:
        code = "X" if card.card in "BR" else card.card
        for quad, seen in card.marks:
            q = np.array(quad, np.float64)
            x_axis, y_axis = q[1] - q[0], q[3] - q[0]
            width, height = np.linalg.norm(x_axis), np.linalg.norm(y_axis)
            if width < 1 or height < 1:
                continue
            rel = centres - q[0]
            u = rel @ (x_axis / width) / width
            v = rel @ (y_axis / height) / height
            inside = (u > -0.15) & (u < 1.15) & (v > -0.15) & (v < 1.15)
            inside &= sizes >= 0.3 * min(width, height)
            if not inside.any():
                continue
            if seen < 0.9:
                cls[inside] = -1
                continue
            whole = inside & whole_mark(q, centres, sizes)
            cls[inside & ~whole] = -1
            theta = np.arctan2(x_axis[1], x_axis[0])
            turn = np.round((theta - angles[whole]) / (np.pi / 2)).astype(np.int64) % 4
            cls[whole] = CLASSES.index(code)
            quarter[whole] = turn
            suit[whole] = SUITS.index(card.suit) if card.suit else -1
    return cls, quarter, suit


class CropSamples(NamedTuple):
    """The convolutional network's samples: crops as cut (``float16``), the quarter turn
    each is read in, and its class in that turn (the last: not a mark)."""

    crops: np.ndarray
    turns: np.ndarray
    classes: np.ndarray


def crop_samples(
    crops: np.ndarray, cls: np.ndarray, quarter: np.ndarray, rng: np.random.Generator
) -> CropSamples:
    """Picks the convolutional network's samples from one scene's labelled candidates.

    Each whole mark is learnt upright as its rank and once more, in a wrong turn, as not a
    mark (the turn that reads best decides which way up a card lies); ``CONVNET_BACKGROUND``
    of the rest in a random turn. Candidates of class -1 (part of a mark) are left out.
    """
    marks = np.nonzero((cls >= 0) & (cls < len(CLASSES)))[0]
    background = np.nonzero(cls == len(CLASSES))[0]
    background = background[rng.random(len(background)) < CONVNET_BACKGROUND]
    wrong = (quarter[marks] + rng.integers(1, 4, len(marks))) % 4
    return CropSamples(
        crops[np.concatenate([marks, marks, background])].astype(np.float16),
        np.concatenate([quarter[marks], wrong, rng.integers(0, 4, len(background))]),
        np.concatenate([cls[marks], np.full(len(marks) + len(background), len(CLASSES), np.int64)]),
    )


def scene_samples(
    seed: int, learnt: str | None = None, crops: bool = False, features: bool = True
) -> tuple[np.ndarray, np.ndarray, np.ndarray, CropSamples | None]:
    """Renders one training scene and returns its features, rank labels and suit labels,
    and with ``crops`` the convolutional network's samples of it.

    With ``learnt`` (a learnt deck's folder), ``LEARNT_SHARE`` of the scenes use it.
    Without ``features`` the first three are empty: only the crops are wanted.
    """
    rng = np.random.default_rng(seed)
    if learnt is not None and rng.random() < LEARNT_SHARE:
        deck = learnt
    else:
        groups = training_decks()
        shares = np.array([share for share, _ in groups])
        decks = groups[int(rng.choice(len(groups), p=shares / shares.sum()))][1]
        deck = decks[int(rng.integers(len(decks)))]
    image, scene = render_table(
        random_layout(rng),
        seed=seed,
        deck=deck,
        hand=bool(rng.random() < 0.3),
        px_per_mm=float(rng.uniform(1.25, 1.95)),
        frame=int(rng.integers(1000)),
    )
    cand = find_candidates(image)
    cls, quarter, suit = label_candidates(scene, cand.centres, cand.angles, cand.sizes)
    # Their own generator, so that the two-layer networks' samples stay as they were.
    conv = (
        crop_samples(cand.crops, cls, quarter, np.random.default_rng([seed, 1])) if crops else None
    )
    if not features:
        return *_no_samples(), conv
    xs, ys, ss = [], [], []
    turns = quarter_features(augment(cand.crops, rng))
    for q in range(4):
        positive = (cls >= 0) & (cls < len(CLASSES)) & (quarter == q)
        background = (cls == len(CLASSES)) | ((cls >= 0) & (cls < len(CLASSES)) & (quarter != q))
        keep = positive | (background & (rng.random(len(cls)) < BACKGROUND_KEEP))
        if not keep.any():
            continue
        xs.append(turns[keep, q])
        ys.append(np.where(positive[keep], cls[keep], len(CLASSES)))
        ss.append(np.where(positive[keep], suit[keep], -1))
    if not xs:
        return *_no_samples(), conv
    return np.concatenate(xs), np.concatenate(ys), np.concatenate(ss), conv


def _no_samples() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The features, rank labels and suit labels of no samples at all."""
    empty = np.zeros(0, np.int64)
    return np.zeros((0, 0), np.float32), empty, empty


def build_dataset(
    scenes: int,
    seed: int,
    workers: int,
    learnt: str | None = None,
    crops: bool = False,
    features: bool = True,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, CropSamples | None]:
    """Renders ``scenes`` scenes in parallel and stacks their samples (with ``crops``, the
    convolutional network's too; without ``features``, only those)."""
    cv2.setNumThreads(1)
    seeds = [seed * 1_000_003 + i for i in range(scenes)]
    render = partial(scene_samples, learnt=learnt, crops=crops, features=features)
    with Pool(workers) as pool:
        parts = pool.map(render, seeds, chunksize=8)
    conv = [p[3] for p in parts if p[3] is not None]
    samples = [p[:3] for p in parts if len(p[1])]
    del parts  # else every scene's features outlive their copy into the stack
    x, y, s = _stack(samples)
    if not conv:
        return x, y, s, None
    return x, y, s, CropSamples(*(np.concatenate(column) for column in zip(*conv, strict=True)))


def _stack(
    parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]],
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Stacks the scenes' samples, freeing each scene's as it is copied.

    The features of 3000 scenes take gigabytes; ``np.concatenate`` would hold them twice.
    """
    if not parts:
        return _no_samples()
    rows = sum(len(p[1]) for p in parts)
    x = np.empty((rows, parts[0][0].shape[1]), np.float32)
    y, s = np.concatenate([p[1] for p in parts]), np.concatenate([p[2] for p in parts])
    at = 0
    while parts:
        features = parts.pop(0)[0]
        x[at : at + len(features)] = features
        at += len(features)
    return x, y, s


def return_freed_memory() -> None:
    """Hands the memory freed since the last call back to the system (glibc only).

    glibc keeps freed memory in its heap for reuse rather than handing it back, so each
    member's scenes, unpickled from the workers, piled on top of the last member's freed
    ones. Trimming between members took the whole retrain's peak from 21.3 GB to 13.2 GB
    resident. Without glibc (musl, macOS) it does nothing.
    """
    trim = getattr(ctypes.CDLL(None), "malloc_trim", None)
    if trim is not None:
        trim(0)


def fit(
    x: np.ndarray,
    y: np.ndarray,
    s: np.ndarray,
    epochs: int,
    seed: int,
    hidden: int = 128,
    start: Model | None = None,
    rate: float = 2e-3,
) -> Model:
    """Trains the two-headed network with Adam on softmax cross-entropy.

    ``start`` (one member) fine-tunes that network instead: its weights and its input
    scaling are kept as the starting point.
    """
    rng = np.random.default_rng(seed)
    n_in, n_rank, n_suit = x.shape[1], len(CLASSES) + 1, len(SUITS)
    if start is None:
        mean = x.mean(axis=0)
        scale = 1 / (x.std(axis=0) + 1e-2)
        params = {
            "w1": rng.normal(0, np.sqrt(2 / n_in), (n_in, hidden)).astype(np.float32),
            "b1": np.zeros(hidden, np.float32),
            "w_rank": rng.normal(0, np.sqrt(1 / hidden), (hidden, n_rank)).astype(np.float32),
            "b_rank": np.zeros(n_rank, np.float32),
            "w_suit": rng.normal(0, np.sqrt(1 / hidden), (hidden, n_suit)).astype(np.float32),
            "b_suit": np.zeros(n_suit, np.float32),
        }
    else:
        mean, scale = start.mean[0], start.scale[0]
        params = {
            k: getattr(start, k)[0].astype(np.float32)
            for k in ("w1", "b1", "w_rank", "b_rank", "w_suit", "b_suit")
        }
    m = {k: np.zeros_like(v) for k, v in params.items()}
    v = {k: np.zeros_like(v) for k, v in params.items()}
    batch, step = 256, 0
    for epoch in range(epochs):
        lr = rate * (0.5 * (1 + np.cos(np.pi * epoch / epochs)))
        order = rng.permutation(len(x))
        total = 0.0
        for at in range(0, len(order), batch):
            idx = order[at : at + batch]
            xb, yb, sb = (x[idx] - mean) * scale, y[idx], s[idx]
            h_pre = xb @ params["w1"] + params["b1"]
            h = np.maximum(h_pre, 0)
            pr = softmax(h @ params["w_rank"] + params["b_rank"])
            ps = softmax(h @ params["w_suit"] + params["b_suit"])
            k = len(idx)
            total += float(-np.log(pr[np.arange(k), yb] + 1e-9).sum())
            g_rank = pr.copy()
            g_rank[np.arange(k), yb] -= 1
            g_rank /= k
            has_suit = sb >= 0
            g_suit = ps.copy()
            g_suit[np.arange(k)[has_suit], sb[has_suit]] -= 1
            g_suit[~has_suit] = 0
            g_suit *= 0.5 / k
            grads = {
                "w_rank": h.T @ g_rank,
                "b_rank": g_rank.sum(axis=0),
                "w_suit": h.T @ g_suit,
                "b_suit": g_suit.sum(axis=0),
            }
            g_h = (g_rank @ params["w_rank"].T + g_suit @ params["w_suit"].T) * (h_pre > 0)
            grads["w1"] = xb.T @ g_h + 1e-4 * params["w1"]
            grads["b1"] = g_h.sum(axis=0)
            step += 1
            for key, grad in grads.items():
                m[key] = 0.9 * m[key] + 0.1 * grad
                v[key] = 0.999 * v[key] + 0.001 * grad * grad
                m_hat = m[key] / (1 - 0.9**step)
                v_hat = v[key] / (1 - 0.999**step)
                params[key] -= lr * m_hat / (np.sqrt(v_hat) + 1e-8)
                for array in (params[key], m[key], v[key]):
                    np.copyto(array, 0, where=np.abs(array) < FLUSH)
        print(f"epoch {epoch + 1}/{epochs} loss {total / len(x):.4f}", flush=True)
    return Model(
        mean=mean[None].astype(np.float32),
        scale=scale[None].astype(np.float32),
        **{k: v[None] for k, v in params.items()},
    )


def fine_tune(base: Model, deck: str, scenes: int, epochs: int, seed: int, workers: int) -> Model:
    """Returns the reader's networks fine-tuned on scenes of a learnt deck.

    Each member goes on from its own weights on its own scenes (seed ``seed + j``), a
    share of them (``LEARNT_SHARE``) laid with ``deck``.
    """
    members = []
    for j, member in enumerate(base.members()):
        x, y, s, _ = build_dataset(scenes, seed + j, workers, learnt=deck)
        print(f"network {j + 1}: {len(y)} samples", flush=True)
        members.append(fit(x, y, s, epochs, seed + j, start=member, rate=FINE_RATE))
    return Model.join(members)


def main(argv: list[str] | None = None) -> int:
    """Builds the data sets, trains, reports held-in accuracy and writes the model files."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scenes", type=positive_int, default=3000)
    parser.add_argument("--epochs", type=positive_int, default=15)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--members", type=positive_int, default=MEMBERS, help="networks, each on its own scenes"
    )
    parser.add_argument("--workers", type=positive_int, default=2)
    parser.add_argument("--out", type=Path, default=MODEL_PATH)
    parser.add_argument(
        "--only",
        choices=("networks", "convnet"),
        help="train only the two-layer networks (--out) or only the convolutional network "
        "(--convnet-out, on the scenes the networks would be trained on)",
    )
    parser.add_argument("--convnet-out", type=Path, default=CONVNET_PATH)
    parser.add_argument("--convnet-epochs", type=positive_int, default=CONVNET_EPOCHS)
    args = parser.parse_args(argv)
    convnet = None
    if args.only != "networks":
        try:
            from table.vision import train_convnet as convnet
        except ImportError as error:
            parser.error(
                f"the convolutional network is trained with torch ({error}): run "
                "bash scripts/train, which installs it, or pass --only networks"
            )
    start = time.time()
    members, crops = [], []
    for member in range(args.members):
        seed = args.seed + member
        x, y, s, conv = build_dataset(
            args.scenes,
            seed,
            args.workers,
            crops=convnet is not None,
            features=args.only != "convnet",
        )
        crops += [conv] if conv is not None else []
        if args.only == "convnet":
            held = len(conv.classes) if conv is not None else 0
            print(f"scenes {member + 1}: {held} crops in {time.time() - start:.0f} s", flush=True)
            return_freed_memory()
            continue
        print(
            f"member {member + 1}: {len(y)} samples ({int((y < len(CLASSES)).sum())} marks) "
            f"in {time.time() - start:.0f} s",
            flush=True,
        )
        members.append(fit(x, y, s, args.epochs, seed))
        right, block = 0, 65536  # a block of rows at a time: the hidden layer of all is large
        for at in range(0, len(x), block):
            pred = members[-1].predict(x[at : at + block])[0].argmax(axis=1)
            right += int((pred == y[at : at + block]).sum())
        print(f"member {member + 1}: training accuracy {right / len(y):.4f}", flush=True)
        del x, y, s
        return_freed_memory()
    if members:
        Model.join(members).save(args.out)
    if convnet is not None and crops:
        samples = CropSamples(*(np.concatenate(column) for column in zip(*crops, strict=True)))
        del crops
        return_freed_memory()
        print(f"convolutional network: {len(samples.classes)} samples", flush=True)
        net = convnet.fit(samples, args.convnet_epochs, args.seed, args.workers)
        convnet.export(net, args.convnet_out)
    print(f"took {time.time() - start:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
