"""What the reader remembers of the deck on the table, to read its unsure marks.

A table plays one deck all evening. The networks read most of its marks surely
but lean to the right rank without reaching the cut on a share of the marks of a
design they were never trained on. The deck memory keeps how the networks saw
the marks they read surely (their hidden layer, ``Model.hidden_turns``) and
reads an unsure candidate when it looks like a remembered mark of the rank the
networks lean to, more than like any other remembered mark, and more than like
the *pieces* remembered beside sure readings: the ``0`` of a ``10`` printed in
two glyphs looks like a ``2`` of the same deck, and the ``0`` pieces seen beside
read tens are what tells it apart.

Such a reading is reported unsure (``MIN_CONFIDENCE``), never sure: it names the
card for the operator to confirm, and it is not remembered, so a wrong one does
not teach the memory. Pure logic: it holds vectors and compares them; the frames
come from the caller, one at a time.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

LEANING = 0.1
"""A candidate whose best reading is at least this (but under the reading cut) is compared."""
ALIKE = 0.8
"""Cosine of the hidden layers above which a candidate looks like a remembered mark."""
MARGIN = 0.03
"""How much more it must look like a mark of its rank than like any other remembered one."""
APART = 1.0
"""Mark sizes from a reading within which a candidate is taken for a piece of it."""
KEEP = 40
"""Marks remembered per rank (and pieces per rank): the latest, so a new deck takes over."""
PIECE_SIZE = 0.95
"""A blob beside a sure reading and smaller than this share of it is remembered as a piece."""

PIECE = 100
"""Added to a rank's class index to label the pieces seen beside its sure readings."""


@dataclass(frozen=True)
class Readings:
    """One frame's candidates as the networks read them: what the memory compares and keeps.

    ``hidden`` is ``(n, 4, h)``, every candidate's hidden layer in each quarter turn;
    ``quarter``, ``cls`` and ``conf`` its best reading; ``centres`` and ``sizes`` its
    blob's.
    """

    hidden: np.ndarray
    quarter: np.ndarray
    cls: np.ndarray
    conf: np.ndarray
    centres: np.ndarray
    sizes: np.ndarray


class DeckMemory:
    """The hidden layers of the marks read surely so far, by rank, and of their pieces.

    Chosen with plastic and anglo left out of training (three networks trained
    without them; 30 scenes of each read in turn, 1308 cards): 1213 cards read
    right and 9 misread without the memory, 1238 and 9 with it; on 15 training
    decks (12 scenes each, 3909 cards) 3824 and 20 without, 3827 and 23 with.

    The vectors sit in one array, ``KEEP`` rows for each label (a rank, or the
    pieces beside a rank), each block used as a ring: an empty row is all zeros
    and labelled -1, so it looks like nothing.
    """

    def __init__(self) -> None:
        self._stored = np.zeros((0, 0), np.float32)
        self._labels = np.zeros(0, np.int64)
        self._first_row: dict[int, int] = {}
        self._kept: dict[int, int] = {}

    def __len__(self) -> int:
        return sum(min(kept, KEEP) for kept in self._kept.values())

    def forget(self, width: int = 0) -> None:
        """Drops everything remembered: another deck comes to the table (or, with a
        ``width``, another model's hidden layer)."""
        self._stored = np.zeros((0, width), np.float32)
        self._labels = np.zeros(0, np.int64)
        self._first_row.clear()
        self._kept.clear()

    def recall(self, frame: Readings, cut: float, excluded: np.ndarray) -> np.ndarray:
        """Tells which unsure candidates read as the rank they lean to, by the memory.

        ``cut`` is the reading cut. A candidate within ``APART`` sizes of a reading,
        or marked in ``excluded`` (a letter of a read joker's word), is a piece of
        another and is left alone.
        """
        conf, centres, sizes = frame.conf, frame.centres, frame.sizes
        rescued = np.zeros(len(conf), bool)
        unsure = np.nonzero((conf >= LEANING) & (conf < cut) & ~excluded)[0]
        if len(unsure) == 0 or self._stored.shape[1] != frame.hidden.shape[2]:
            return rescued  # nothing to read, or nothing remembered with this model
        read = np.nonzero(conf >= cut)[0]
        if len(read):
            gap = np.hypot(*(centres[read][None] - centres[unsure][:, None]).transpose(2, 0, 1))
            reach = APART * np.maximum(sizes[read][None], sizes[unsure][:, None])
            unsure = unsure[~(gap < reach).any(axis=1)]
        alike = _units(frame.hidden[unsure, frame.quarter[unsure]]) @ self._stored.T
        own = self._labels[None] == frame.cls[unsure][:, None]
        best = np.where(own, alike, -1.0).max(axis=1, initial=-1.0)
        rival = np.where(own, -1.0, alike).max(axis=1, initial=-1.0)
        rescued[unsure] = (best >= ALIKE) & (best - rival >= MARGIN)
        return rescued

    def remember(self, frame: Readings, sure: float) -> None:
        """Keeps the sure readings of a frame, and the smaller blobs beside each as its pieces."""
        conf, centres, sizes = frame.conf, frame.centres, frame.sizes
        if self._stored.shape[1] != frame.hidden.shape[2]:
            self.forget(frame.hidden.shape[2])
        for i in np.nonzero(conf >= sure)[0]:
            q = frame.quarter[i]
            self._keep(int(frame.cls[i]), frame.hidden[i, q][None])
            beside = _pieces_beside(int(i), conf, centres, sizes, sure)
            if beside.any():
                self._keep(PIECE + int(frame.cls[i]), frame.hidden[beside, q])

    def _keep(self, label: int, vectors: np.ndarray) -> None:
        """Writes vectors into the label's ring of rows, over its oldest ones."""
        if label not in self._first_row:
            self._first_row[label], self._kept[label] = len(self._stored), 0
            empty = np.zeros((KEEP, self._stored.shape[1]), np.float32)
            self._stored = np.concatenate([self._stored, empty])
            self._labels = np.concatenate([self._labels, np.full(KEEP, -1)])
        vectors = vectors[-KEEP:]
        kept = self._kept[label]
        rows = self._first_row[label] + (kept + np.arange(len(vectors))) % KEEP
        self._stored[rows] = _units(vectors)
        self._labels[rows] = label
        self._kept[label] = kept + len(vectors)


def remembered(conf: np.ndarray, centres: np.ndarray, sizes: np.ndarray, sure: float) -> np.ndarray:
    """Tells which candidates' hidden layers ``DeckMemory.remember`` keeps: the sure
    readings and the pieces beside each."""
    kept = conf >= sure
    for i in np.nonzero(kept)[0]:
        kept |= _pieces_beside(int(i), conf, centres, sizes, sure)
    return kept


def _pieces_beside(
    i: int, conf: np.ndarray, centres: np.ndarray, sizes: np.ndarray, sure: float
) -> np.ndarray:
    """Tells which candidates are pieces beside sure reading ``i``: smaller blobs, not read
    surely, within ``APART`` of its size."""
    gap = np.hypot(*(centres - centres[i]).T)
    return (gap < APART * sizes[i]) & (sizes < PIECE_SIZE * sizes[i]) & (conf < sure)


def _units(vectors: np.ndarray) -> np.ndarray:
    """Returns the rows scaled to length 1 (a zero row stays 0)."""
    return vectors / (np.linalg.norm(vectors, axis=1, keepdims=True) + 1e-6)
