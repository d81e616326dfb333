"""Trains the convolutional second opinion (``convnet.onnx``) with torch, and exports it.

The reader runs the exported file with ``cv2.dnn`` alone; torch (the ``train`` extra) is
needed only here. ``python -m table.vision.train`` calls this on the crops of all its
networks' scenes (``train.CropSamples``); ``--only convnet`` trains this network alone.
"""

from __future__ import annotations

import logging
import math
import warnings
from pathlib import Path

import cv2
import numpy as np
import torch
from torch import nn

from table.vision.recognize import CLASSES, CROP, ink
from table.vision.train import CropSamples, augment

BATCH = 256
RATE = 2e-3
"""Peak learning rate of the one-cycle schedule."""
WEIGHT_DECAY = 1e-4
SHIFT = 2
"""Largest shift, in pixels each way, of a sample's crop: a candidate's centre is the
blob's, which sits a little off the mark's middle when the mark is cut by a shadow."""
CHUNK = 20_000
"""Crops augmented at a time, to bound the float32 copies."""


def network() -> nn.Sequential:
    """Returns the untrained network: three strided convolutions, then two dense layers.

    About 1.85 million multiply-adds a crop, so that reading the few unsure candidates of
    a frame in four turns costs a few milliseconds on one core.
    """
    return nn.Sequential(
        nn.Conv2d(1, 16, 5, stride=2, padding=2),
        nn.ReLU(),
        nn.Conv2d(16, 32, 3, stride=2, padding=1),
        nn.ReLU(),
        nn.Conv2d(32, 64, 3, stride=2, padding=1),
        nn.ReLU(),
        nn.Flatten(),
        nn.Linear(64 * (CROP // 8) ** 2, 128),
        nn.ReLU(),
        nn.Linear(128, len(CLASSES) + 1),
    )


def epoch_inputs(samples: CropSamples, rng: np.random.Generator) -> np.ndarray:
    """Returns the samples as the network learns them this pass, ``(n, 1, CROP, CROP)``
    ``float16``: augmented (``train.augment``), shifted, turned and as ink."""
    out = np.empty((len(samples.classes), 1, CROP, CROP), np.float16)
    for at in range(0, len(out), CHUNK):
        crops = augment(samples.crops[at : at + CHUNK].astype(np.float32), rng)
        for i, (dx, dy) in enumerate(rng.integers(-SHIFT, SHIFT + 1, (len(crops), 2))):
            move = np.array([[1, 0, dx], [0, 1, dy]], np.float32)
            crops[i] = cv2.warpAffine(crops[i], move, (CROP, CROP), borderMode=cv2.BORDER_REPLICATE)
        marks = ink(crops)
        turns = samples.turns[at : at + CHUNK]
        for k in range(1, 4):
            marks[turns == k] = np.rot90(marks[turns == k], k, axes=(1, 2))
        out[at : at + CHUNK, 0] = marks
    return out


def fit(samples: CropSamples, epochs: int, seed: int, threads: int) -> nn.Sequential:
    """Trains the network with AdamW on cross-entropy, one-cycle rate, on ``threads`` cores."""
    torch.manual_seed(seed)
    torch.set_num_threads(threads)
    torch.set_flush_denormal(True)  # as ``train.FLUSH``: subnormals are slow on some processors
    rng = np.random.default_rng(seed)
    net = network()
    optimiser = torch.optim.AdamW(net.parameters(), lr=RATE, weight_decay=WEIGHT_DECAY)
    n = len(samples.classes)
    schedule = torch.optim.lr_scheduler.OneCycleLR(
        optimiser, max_lr=RATE, total_steps=epochs * math.ceil(n / BATCH)
    )
    labels = torch.from_numpy(samples.classes.astype(np.int64))
    inputs = np.zeros(0, np.float16)
    for epoch in range(epochs):
        del inputs  # a pass's inputs take gigabytes: never two passes' at once
        inputs = epoch_inputs(samples, rng)
        order = rng.permutation(n)
        net.train()
        total, right = 0.0, 0
        for at in range(0, n, BATCH):
            idx = order[at : at + BATCH]
            logits = net(torch.from_numpy(inputs[idx].astype(np.float32)))
            loss = nn.functional.cross_entropy(logits, labels[idx])
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            schedule.step()
            total += loss.item() * len(idx)
            right += int((logits.argmax(dim=1) == labels[idx]).sum())
        print(
            f"convnet epoch {epoch + 1}/{epochs} loss {total / n:.4f} "
            f"training accuracy {right / n:.4f}",
            flush=True,
        )
    return net.eval()


def export(net: nn.Sequential, path: Path) -> None:
    """Writes the network as ONNX with any number of crops, for ``recognize.Convnet``."""
    # torch's exporter warns of its own internals' deprecations and of torchvision's
    # operators, which the network does not use; none of it is about this call.
    logging.getLogger("torch.onnx").setLevel(logging.ERROR)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        torch.onnx.export(
            net,
            (torch.zeros(2, 1, CROP, CROP),),
            path,
            input_names=["ink"],
            output_names=["logits"],
            dynamic_shapes=({0: torch.export.Dim("crops")},),
            dynamo=True,
            external_data=False,
            verbose=False,
        )
