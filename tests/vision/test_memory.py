"""The deck memory: unsure marks read by the sure ones of the same deck seen before."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from table.vision.memory import ALIKE, KEEP, DeckMemory, Readings

CUT, SURE = 0.7, 0.9
WIDTH = 16


def unit(seed: int) -> np.ndarray:
    """A random direction of the hidden layer, far from the others."""
    v = np.random.default_rng(seed).normal(size=WIDTH).astype(np.float32)
    return v / np.linalg.norm(v)


def near(v: np.ndarray, cosine: float, seed: int) -> np.ndarray:
    """A vector whose cosine with the unit vector ``v`` is ``cosine``."""
    other = unit(seed)
    other -= (other @ v) * v
    other /= np.linalg.norm(other)
    return (cosine * v + np.sqrt(1 - cosine**2) * other).astype(np.float32)


class Frame:
    """Candidates of one frame: each with its hidden layer in four turns and a best reading."""

    def __init__(self) -> None:
        self.hidden: list[np.ndarray] = []
        self.quarter: list[int] = []
        self.cls: list[int] = []
        self.conf: list[float] = []
        self.centres: list[tuple[float, float]] = []
        self.sizes: list[float] = []

    def add(
        self, vector: np.ndarray, cls: int, conf: float, at: tuple[float, float], quarter: int = 0
    ) -> int:
        turns = np.stack([unit(100 + len(self.hidden) * 4 + k) for k in range(4)])
        turns[quarter] = vector
        self.hidden.append(turns)
        self.quarter.append(quarter)
        self.cls.append(cls)
        self.conf.append(conf)
        self.centres.append(at)
        self.sizes.append(20.0)
        return len(self.cls) - 1

    def readings(self) -> Readings:
        return Readings(
            np.stack(self.hidden),
            np.array(self.quarter),
            np.array(self.cls),
            np.array(self.conf, np.float32),
            np.array(self.centres, np.float64),
            np.array(self.sizes),
        )

    def remember(self, memory: DeckMemory) -> None:
        memory.remember(self.readings(), SURE)

    def recall(self, memory: DeckMemory, excluded: list[int] = ()) -> np.ndarray:
        mask = np.zeros(len(self.cls), bool)
        mask[list(excluded)] = True
        return memory.recall(self.readings(), CUT, mask)


def memory_of(marks: dict[int, np.ndarray]) -> DeckMemory:
    """A memory that saw one sure mark of each rank given, far apart."""
    memory, frame = DeckMemory(), Frame()
    for k, (cls, vector) in enumerate(marks.items()):
        frame.add(vector, cls, 0.97, (100.0 * k, 0.0))
    frame.remember(memory)
    return memory


def test_an_unsure_mark_like_a_remembered_one_of_its_leaning_is_read() -> None:
    seven, eight = unit(1), unit(2)
    memory = memory_of({4: seven, 5: eight})
    frame = Frame()
    frame.add(near(seven, 0.9, 3), 4, 0.45, (500.0, 500.0), quarter=2)
    frame.add(near(seven, 0.9, 4), 5, 0.45, (900.0, 500.0))  # leans to the 8, looks like the 7
    frame.add(near(seven, 0.9, 5), 4, 0.05, (500.0, 900.0))  # hardly leans to any rank
    frame.add(near(seven, ALIKE - 0.05, 6), 4, 0.45, (900.0, 900.0))  # not alike enough
    assert frame.recall(memory).tolist() == [True, False, False, False]


def test_a_mark_as_like_another_rank_stays_unsure() -> None:
    seven = unit(1)
    mark = near(seven, 0.9, 3)
    memory = memory_of({4: seven, 5: near(mark, 0.89, 2)})
    frame = Frame()
    frame.add(mark, 4, 0.45, (500.0, 500.0))
    assert not frame.recall(memory).any()
    assert frame.recall(memory_of({4: seven, 5: near(mark, 0.8, 2)})).all()


def test_pieces_seen_beside_sure_readings_keep_a_look_alike_unread() -> None:
    """The ``0`` of a ten looks like the deck's twos; beside a read ten it is remembered
    as a piece, and a lone ``0`` later is not read as a two."""
    two = unit(1)
    zero = near(two, 0.85, 3)
    memory, frame = memory_of({12: two}), Frame()
    frame.add(unit(4), 7, 0.95, (0.0, 0.0))  # the ten, read surely
    frame.add(zero, 1, 0.2, (8.0, 0.0))  # its 0, smaller: a piece
    frame.sizes[1] = 12.0
    frame.remember(memory)
    later = Frame()
    later.add(zero, 12, 0.45, (500.0, 500.0))
    assert not later.recall(memory).any()
    assert later.recall(memory_of({12: two})).all()


def test_a_blob_by_a_reading_or_in_a_jokers_word_is_left_alone() -> None:
    seven = unit(1)
    memory = memory_of({4: seven})
    frame = Frame()
    frame.add(unit(9), 3, 0.95, (0.0, 0.0))  # a sure reading
    frame.add(near(seven, 0.9, 3), 4, 0.45, (15.0, 0.0))  # within a mark size of it
    frame.add(near(seven, 0.9, 4), 4, 0.45, (500.0, 0.0))  # a letter of a read joker's word
    frame.add(near(seven, 0.9, 5), 4, 0.45, (900.0, 0.0))
    assert frame.recall(memory, excluded=[2]).tolist() == [False, False, False, True]


def test_memory_keeps_the_latest_marks_of_each_rank_and_forgets() -> None:
    memory = DeckMemory()
    for k in range(KEEP + 5):
        frame = Frame()
        frame.add(unit(k), 4, 0.95, (0.0, 0.0))
        frame.add(unit(1000 + k), 5, 0.95, (500.0, 0.0))
        frame.add(unit(2000 + k), 6, 0.5, (900.0, 0.0))  # unsure: not remembered
        frame.remember(memory)
    assert len(memory) == 2 * KEEP
    frame = Frame()
    frame.add(near(unit(KEEP + 4), 0.9, 7), 4, 0.45, (0.0, 0.0))
    frame.add(near(unit(0), 0.9, 8), 4, 0.45, (500.0, 0.0))  # the oldest seven: dropped
    assert frame.recall(memory).tolist() == [True, False]
    memory.forget()
    assert len(memory) == 0 and not frame.recall(memory).any()


def test_a_memory_of_another_models_layer_reads_nothing() -> None:
    memory = memory_of({4: unit(1)})
    frame = Frame()
    frame.add(near(unit(1), 0.9, 3), 4, 0.45, (0.0, 0.0))
    readings = frame.readings()
    wider = dataclasses.replace(readings, hidden=np.concatenate([readings.hidden] * 2, axis=2))
    assert not memory.recall(wider, CUT, np.zeros(1, bool)).any()


@pytest.mark.parametrize("conf", [0.7, 0.95])
def test_a_candidate_already_read_is_not_read_again(conf: float) -> None:
    memory = memory_of({4: unit(1)})
    frame = Frame()
    frame.add(near(unit(1), 0.95, 3), 4, conf, (0.0, 0.0))
    assert not frame.recall(memory).any()
