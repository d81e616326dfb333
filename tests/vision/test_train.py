"""Training labels and crop augmentation: what the network is taught."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from table.vision import train
from table.vision.capture import save_deck
from table.vision.faces import CARD_IDS, load_deck
from table.vision.recognize import CLASSES, CROP, Model, load_model
from table.vision.synth import render_table
from table.vision.train import (
    AUGMENTED,
    LEARNT_SHARE,
    _stack,
    augment,
    fine_tune,
    fit,
    label_candidates,
    main,
    scene_samples,
)

pytestmark = pytest.mark.vision

BACKGROUND = len(CLASSES)


def _seven_mark() -> tuple[np.ndarray, float, float]:
    """Renders one seven of clubs and returns its first mark's centre, extent and x-axis angle."""
    _, scene = render_table({"seat0": [["7c"]]}, seed=3, deck="own0", px_per_mm=1.5)
    quad, seen = scene.cards[0].marks[0]
    assert seen >= 0.9
    q = np.array(quad)
    extent = max(np.linalg.norm(q[1] - q[0]), np.linalg.norm(q[3] - q[0]))
    x_axis = q[1] - q[0]
    return q.mean(axis=0), float(extent), float(np.arctan2(x_axis[1], x_axis[0]))


def test_only_a_candidate_that_is_the_whole_mark_is_labelled_with_its_rank() -> None:
    centre, extent, angle = _seven_mark()
    _, scene = render_table({"seat0": [["7c"]]}, seed=3, deck="own0", px_per_mm=1.5)
    centres = np.array(
        [
            centre,  # the whole mark
            centre,  # a stroke of it, cut off by a thin ink cut
            centre,  # the mark joined to its pip
            centre + np.array([0.2, 0.1]) * extent,  # the whole mark, found a little off
            centre + np.array([30.0, 0.0]) * extent,  # far away, on the table
        ]
    )
    sizes = np.array([1.0, 0.4, 1.8, 1.05, 1.0]) * extent
    cls, quarter, suit = label_candidates(scene, centres, np.full(5, angle), sizes)
    seven = CLASSES.index("7")
    assert cls.tolist() == [seven, -1, -1, seven, BACKGROUND]
    assert quarter[0] == 0 and quarter[3] == 0
    assert suit[0] == "shdc".index("c")


def test_augment_changes_most_crops_and_keeps_the_rest() -> None:
    rng = np.random.default_rng(0)
    crops = np.full((400, CROP, CROP), 230, np.float32)
    crops[:, 14:34, 20:28] = 20  # a dark upright bar, the stem of a mark
    out = augment(crops, np.random.default_rng(1))
    assert out.shape == crops.shape and out.dtype == crops.dtype
    changed = np.abs(out - crops).reshape(len(crops), -1).max(axis=1) > 1
    assert abs(changed.mean() - AUGMENTED) < 0.08
    assert np.array_equal(out[~changed], crops[~changed])
    # Stretched, sheared or bolder, the mark stays a mark in the middle of the crop.
    middle = out[:, 20:28, 22:26].mean(axis=(1, 2))
    assert (middle < 120).all()
    # The same seed gives the same crops: training is reproducible.
    assert np.array_equal(out, augment(crops, np.random.default_rng(1)))
    assert not np.array_equal(out, augment(crops, rng))


def test_a_joined_model_reads_the_average_of_its_members() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(64, 10)).astype(np.float32)
    y = rng.integers(0, BACKGROUND + 1, 64)
    s = rng.integers(-1, 4, 64)
    first, second = fit(x, y, s, epochs=1, seed=1), fit(x, y, s, epochs=1, seed=2)
    joined = Model.join([first, second])
    assert joined.w1.shape[0] == 2
    for got, one, two in zip(joined.predict(x), first.predict(x), second.predict(x), strict=True):
        assert np.allclose(got, (one + two) / 2, atol=1e-6)
        assert not np.allclose(one, two)


def test_weights_too_small_to_matter_are_set_to_zero_not_left_subnormal() -> None:
    # A weight of an input that never varies gets no gradient but its own decay; left
    # alone it would sink into float32's subnormal range, where some processors slow
    # every product twentyfold.
    rng = np.random.default_rng(0)
    x = rng.normal(size=(64, 10)).astype(np.float32)
    x[:, 3] = 1.0
    y = rng.integers(0, BACKGROUND + 1, 64)
    s = rng.integers(-1, 4, 64)
    start = fit(x, y, s, epochs=1, seed=1)
    start.w1[0, 3, :] = 1e-40
    tuned = fit(x, y, s, epochs=1, seed=1, start=start)
    tiny = np.abs(tuned.w1[0, 3, :])
    assert (tiny == 0).all(), tiny


def test_the_data_set_is_stacked_in_the_order_of_its_scenes() -> None:
    rng = np.random.default_rng(0)
    parts = [
        (rng.normal(3, 2, (n, 5)).astype(np.float32), rng.integers(0, 9, n), rng.integers(-1, 4, n))
        for n in (7, 1, 12)
    ]
    whole = [np.concatenate([p[k] for p in parts]) for k in range(3)]
    x, y, s = _stack(list(parts))
    assert x.dtype == np.float32
    assert all(np.array_equal(a, b) for a, b in zip((x, y, s), whole, strict=True))


def test_nothing_to_stack_is_no_samples() -> None:
    x, y, s = _stack([])
    assert x.shape == (0, 0) and len(y) == len(s) == 0


def test_without_features_a_scene_gives_the_same_crops_and_nothing_else() -> None:
    whole, crops_only = scene_samples(5, crops=True), scene_samples(5, crops=True, features=False)
    assert len(whole[1]) > 0 and len(crops_only[0]) == len(crops_only[1]) == 0
    assert whole[3] is not None and crops_only[3] is not None
    assert all(np.array_equal(a, b) for a, b in zip(whole[3], crops_only[3], strict=True)), (
        "the convolutional network's samples must not depend on the features"
    )


@pytest.mark.parametrize("option", ["--members", "--scenes", "--epochs", "--workers"])
def test_the_trainer_refuses_a_count_below_one_with_a_message(
    option: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        main([option, "0", "--out", "/nonexistent/model.npz"])
    assert f"argument {option}: 0 must be 1 or more" in capsys.readouterr().err


@pytest.fixture
def learnt_folder(tmp_path: Path) -> str:
    """A deck folder as ``vision learn`` writes it, with the faces of the own3 deck."""
    source = load_deck("own3")
    save_deck({card: source.faces[card] for card in CARD_IDS}, tmp_path / "deck")
    return str(tmp_path / "deck")


def test_a_learnt_deck_lays_its_share_of_the_fine_tuning_scenes(
    learnt_folder: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    laid: list[str] = []
    render = train.render_table

    def recording(*args: object, **kwargs: object) -> object:
        laid.append(str(kwargs["deck"]))
        return render(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(train, "render_table", recording)
    for seed in range(12):
        x, y, _, _ = scene_samples(seed, learnt=learnt_folder)
        assert len(x) == len(y) > 0
    share = laid.count(learnt_folder) / len(laid)
    assert abs(share - LEARNT_SHARE) < 0.3
    assert len(set(laid)) > 2


def test_fine_tuning_goes_on_from_each_network_and_keeps_its_input_scaling(
    learnt_folder: str,
) -> None:
    base = load_model()
    tuned = fine_tune(base, learnt_folder, scenes=2, epochs=1, seed=100, workers=1)
    assert tuned.w1.shape == base.w1.shape
    assert np.array_equal(tuned.mean, base.mean) and np.array_equal(tuned.scale, base.scale)
    moved = np.abs(tuned.w1 - base.w1)
    # A few small steps from the trained weights, not a network started afresh.
    assert 0 < moved.max() < 0.02
