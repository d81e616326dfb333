"""The convolutional second opinion: what it learns from, its file, and what it reads."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from table import vision
from table.errors import UserError
from table.vision import train
from table.vision.recognize import (
    CLASSES,
    CROP,
    Convnet,
    find_candidates,
    ink,
    load_convnet,
)
from table.vision.synth import render_table
from table.vision.train import crop_samples, label_candidates, random_layout, scene_samples

pytestmark = pytest.mark.vision

BACKGROUND = len(CLASSES)


def test_each_whole_mark_is_learnt_upright_and_once_in_a_wrong_turn(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(train, "CONVNET_BACKGROUND", 1.0)
    crops = np.random.default_rng(0).uniform(0, 255, (5, CROP, CROP)).astype(np.float32)
    cls = np.array([3, BACKGROUND, -1, 13, BACKGROUND])
    quarter = np.array([2, -1, -1, 0, -1])
    got = crop_samples(crops, cls, quarter, np.random.default_rng(1))
    assert got.crops.dtype == np.float16
    # The marks upright, the marks again, then the background; the part of a mark never.
    assert np.allclose(got.crops, crops[[0, 3, 0, 3, 1, 4]], atol=0.13)
    assert got.classes.tolist() == [3, 13, BACKGROUND, BACKGROUND, BACKGROUND, BACKGROUND]
    assert got.turns[:2].tolist() == [2, 0]
    assert (got.turns[2:4] != quarter[[0, 3]]).all()
    assert set(got.turns[4:].tolist()) <= {0, 1, 2, 3}


def test_a_share_of_the_background_is_learnt() -> None:
    n = 4000
    cls = np.full(n, BACKGROUND)
    got = crop_samples(
        np.zeros((n, CROP, CROP), np.float32), cls, np.full(n, -1), np.random.default_rng(2)
    )
    assert abs(len(got.classes) / n - train.CONVNET_BACKGROUND) < 0.03
    assert np.bincount(got.turns, minlength=4).min() > 0.2 * len(got.turns)


def test_ink_is_zero_on_the_paper_and_one_at_the_darkest_stroke() -> None:
    crop = np.full((1, CROP, CROP), 210.0, np.float32)
    crop[0, 20:28, 10:38] = 40.0
    marks = ink(crop)
    assert marks[0, 0, 0] == pytest.approx(0, abs=1e-6)
    assert marks[0, 24, 24] == pytest.approx(1, abs=1e-6)
    # The same mark in a dimmer light reads alike.
    assert np.allclose(ink(crop * 0.5), marks, atol=1e-5)


@pytest.mark.parametrize("deck", ["tango_nuevo", "own2", "font3"])
def test_the_committed_network_reads_whole_marks_the_right_way_up(deck: str) -> None:
    rng = np.random.default_rng(8)
    image, scene = render_table(random_layout(rng), seed=8, deck=deck, px_per_mm=1.5)
    cand = find_candidates(image)
    cls, quarter, _ = label_candidates(scene, cand.centres, cand.angles, cand.sizes)
    marks = np.nonzero((cls >= 0) & (cls < BACKGROUND))[0]
    assert len(marks) >= 8
    crops = np.repeat(cand.crops[marks], 4, axis=0)
    p = load_convnet().predict_turned(crops, np.tile(np.arange(4), len(marks)))
    assert p.shape == (4 * len(marks), BACKGROUND + 1)
    p = p.reshape(len(marks), 4, -1)
    assert np.allclose(p.sum(axis=2), 1, atol=1e-4)
    # As the reader reads: the likeliest mark over every turn ("not a mark" is likeliest
    # in each wrong turn).
    turn, read = np.divmod(p[..., :-1].reshape(len(marks), -1).argmax(axis=1), BACKGROUND)
    right = (turn == quarter[marks]) & (read == cls[marks])
    assert right.mean() > 0.9, (deck, right.mean())


def test_a_missing_network_file_is_named_with_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(UserError, match=r"missing\.onnx is missing.*bash scripts/train"):
        load_convnet(tmp_path / "missing.onnx")


def test_a_file_that_is_no_network_is_refused_with_a_message(tmp_path: Path) -> None:
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not a network")
    with pytest.raises(UserError, match=r"bad\.onnx is not the card reader's convolutional"):
        Convnet(bad)


@pytest.mark.slow
def test_the_trainer_writes_a_network_the_reader_runs_as_torch_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    torch = pytest.importorskip("torch", reason="the train extra is part of the test install")
    from table.vision import train_convnet

    out, model = tmp_path / "convnet.onnx", tmp_path / "model.npz"
    args = ["--only", "convnet", "--scenes", "3", "--workers", "1", "--convnet-epochs", "1"]
    assert train.main([*args, "--convnet-out", str(out), "--out", str(model)]) == 0
    assert out.is_file() and not model.exists()

    samples = scene_samples(4, crops=True)[3]
    assert samples is not None
    net = train_convnet.fit(samples, epochs=1, seed=0, threads=1)
    train_convnet.export(net, out)
    crops = samples.crops[:50].astype(np.float32)
    for k in range(4):
        got = Convnet(out).predict_turned(crops, np.full(len(crops), k))
        turned = np.ascontiguousarray(np.rot90(ink(crops), k, axes=(1, 2))[:, None])
        with torch.no_grad():
            expected = torch.softmax(net(torch.from_numpy(turned)), dim=1).numpy()
        assert np.allclose(got, expected, atol=1e-4), k

    # Learnt in its turn: with nothing augmented or shifted, a sample is its crop's ink
    # turned as the reader turns it.
    monkeypatch.setattr(train, "AUGMENTED", 0.0)
    monkeypatch.setattr(train_convnet, "SHIFT", 0)
    learnt = train_convnet.epoch_inputs(samples, np.random.default_rng(0))[:50, 0]
    for i, k in enumerate(samples.turns[:50]):
        assert np.allclose(learnt[i], np.rot90(ink(crops[i : i + 1])[0], k), atol=1e-3)


def test_training_the_network_without_torch_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "torch", None)
    monkeypatch.delitem(sys.modules, "table.vision.train_convnet", raising=False)
    monkeypatch.delattr(vision, "train_convnet", raising=False)
    with pytest.raises(SystemExit):
        train.main(["--only", "convnet", "--scenes", "1"])
    err = capsys.readouterr().err
    assert "trained with torch" in err and "bash scripts/train" in err
