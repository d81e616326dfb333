"""The demo's virtual camera: each scene rendered a few times, then its renders reused."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pytest

from table.controller import virtual
from table.controller.virtual import VirtualTable
from table.rules import Cards


@pytest.fixture
def renders(monkeypatch: pytest.MonkeyPatch) -> list[tuple[dict[str, list[str]], int]]:
    """Replaces the renderer by one that draws the frame number and remembers each call."""
    calls: list[tuple[dict[str, list[str]], int]] = []

    def render(
        plays: Mapping[str, Sequence[str]], seed: int, *, deck: str, frame: int
    ) -> tuple[np.ndarray, None]:
        calls.append(({zone: list(cards) for zone, cards in plays.items()}, frame))
        return np.full((2, 2, 3), frame, np.uint8), None

    monkeypatch.setattr(virtual, "render_table", render)
    return calls


def test_a_scene_left_alone_cycles_through_its_renders(
    renders: list[tuple[dict[str, list[str]], int]],
) -> None:
    table = VirtualTable(1, fps=1000)
    table.lay(0, Cards.from_str("33"))
    frames = [table.read() for _ in range(3 * VirtualTable.VARIANTS)]
    assert len(renders) == VirtualTable.VARIANTS
    assert all(plays == {"seat0": ["33"]} for plays, _ in renders)
    first = frames[: VirtualTable.VARIANTS]
    assert len({int(frame[0, 0, 0]) for frame in first}) == VirtualTable.VARIANTS
    for number, frame in enumerate(frames):
        assert np.array_equal(frame, first[number % VirtualTable.VARIANTS])
    frames[0][:] = 0  # a caller's frame is its own
    assert not np.array_equal(table.read(), frames[0])


@pytest.mark.parametrize(("scenes_kept", "rendered_again"), [(1, True), (2, False)])
def test_a_scene_shown_again_reuses_its_renders_while_kept(
    renders: list[tuple[dict[str, list[str]], int]], scenes_kept: int, rendered_again: bool
) -> None:
    table = VirtualTable(1, fps=1000, scenes_kept=scenes_kept)
    table.lay(1, Cards.from_str("4"))
    for _ in range(VirtualTable.VARIANTS):
        table.read()
    table.clear()
    for _ in range(VirtualTable.VARIANTS):
        table.read()
    before = len(renders)
    table.lay(1, Cards.from_str("4"))
    for _ in range(VirtualTable.VARIANTS):
        table.read()
    assert (len(renders) > before) == rendered_again
    assert len(renders) == (3 if rendered_again else 2) * VirtualTable.VARIANTS
