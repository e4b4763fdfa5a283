"""Frames as arrays: PyBullet's pixels to RGB, and many frames tiled into one image."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from rigidrot_gym.physics.plumbing.validation import count


def rgb(pixels: Any, width: int, height: int) -> np.ndarray:
    """(height, width, 3) contiguous uint8 RGB from getCameraImage's RGBA pixels, which are a
    (height, width, 4) uint8 array when PyBullet was built with numpy and a flat list otherwise."""
    rgba = np.asarray(pixels, dtype=np.uint8).reshape(height, width, 4)
    return np.ascontiguousarray(rgba[..., :3])


def tile(frames: Sequence[np.ndarray] | np.ndarray, columns: int) -> np.ndarray:
    """Tile equally sized frames into one image, row by row, for vector envs.

    Args:
        frames: n ≥ 1 frames of shape (h, w, c), uint8.
        columns: frames per row; at most n are used. The last row is padded with black.

    Returns:
        (rows·h, columns·w, c) contiguous uint8 array, rows = ceil(n / columns).

    Raises:
        ValueError: for no frames, frames of different shapes or not uint8 images, or a
            non-positive ``columns``.
    """
    columns = count(columns, "columns", minimum=1)
    frames = list(frames)
    if not frames:
        raise ValueError("frames must hold at least one frame, got none")
    shape = np.shape(frames[0])
    for i, frame in enumerate(frames):
        if np.shape(frame) != shape or len(shape) != 3 or np.asarray(frame).dtype != np.uint8:
            raise ValueError(
                f"frames must be uint8 images of one shape (h, w, c), got frame {i} of shape "
                f"{np.shape(frame)} and dtype {np.asarray(frame).dtype} (frame 0: {shape})"
            )
    n = len(frames)
    columns = min(columns, n)
    rows = -(-n // columns)
    h, w, c = shape
    out = np.zeros((rows * h, columns * w, c), dtype=np.uint8)
    for i, frame in enumerate(frames):
        r, k = divmod(i, columns)
        out[r * h : (r + 1) * h, k * w : (k + 1) * w] = frame
    return out
