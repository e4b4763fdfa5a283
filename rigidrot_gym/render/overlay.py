"""A legend and a readout drawn onto a rendered frame, for a person watching it.

:func:`draw_overlay` puts two boxes on a copy of an RGB frame: in the top-left corner a
key to what :class:`~rigidrot_gym.render.scene.Scene` draws (its own colours: the body's
axes, the target's pale axes, the L and ω arrows, the ellipsoid of inertia, or the
spacecraft with its plumes and the Sun and nadir arrows: :func:`legend_of`), and in the
bottom-left corner the simulated time, the pointing error to the target and the body
rates. Every pixel outside the two boxes (:func:`overlay_boxes`) is the frame's own.

The text is Pillow's built-in bitmap font, so the pixels depend on no system font; it
is Latin-1 only, hence "omega" and "deg" for ω and °. The boxes are sized for frames of
about 320×240 and more (the legend is ≈170×65 pixels, ≈170×100 with a spacecraft's
plumes and an orbit's Sun and nadir); a smaller frame clips them.
"""

from __future__ import annotations

import functools
import math
import numbers
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from rigidrot_gym.render.scene import (
    AXIS_COLORS,
    BODY_COLOR,
    GHOST_COLORS,
    MOMENTUM_COLOR,
    NADIR_COLOR,
    OMEGA_COLOR,
    PLUME_COLOR,
    SUN_COLOR,
)
from rigidrot_gym.render.spacecraft import PANEL_COLOR, STRUCTURE_COLOR

_PAD = 4  # pixels between a box's edge and its text, and between the boxes and the frame's edge
_LINE = 12  # pixels from one text line to the next (the bitmap font is 11 high)
_SWATCH = 20  # width of a legend entry's colour sample, pixels
# The boxes are paper over the scene: the frame shows through at this weight.
_SHOW_THROUGH = 0.25
_PAPER = 255.0
_INK = (0, 0, 0)


def _rgb(colour: tuple[float, ...]) -> tuple[int, int, int]:
    """A scene colour (RGBA in [0, 1]) as 8-bit RGB: TinyRenderer draws every alpha > 0
    opaque, so the legend shows what the frame shows."""
    r, g, b = (round(255 * c) for c in colour[:3])
    return r, g, b


# (label, colours of its sample): several colours share the sample side by side.
Legend = tuple[tuple[str, tuple[tuple[int, int, int], ...]], ...]
LEGEND: Legend = (
    ("body axes x, y, z", tuple(_rgb(c) for c in AXIS_COLORS)),
    ("target axes x, y, z", tuple(_rgb(c) for c in GHOST_COLORS)),
    ("L: angular momentum", (_rgb(MOMENTUM_COLOR),)),
    ("omega: angular velocity", (_rgb(OMEGA_COLOR),)),
    ("body: inertia ellipsoid", (_rgb(BODY_COLOR),)),
)


def legend_of(spacecraft: bool, thrusters: bool, orbit: bool) -> Legend:
    """The legend of a scene: :data:`LEGEND`, with the spacecraft (structure and cells or
    facets) for the ellipsoid when one is drawn, the plumes with thrusters, and the Sun and
    nadir arrows on an orbit."""
    body = ("body: structure, cells/facets", (_rgb(STRUCTURE_COLOR), _rgb(PANEL_COLOR)))
    out = [*LEGEND[:-1], body if spacecraft else LEGEND[-1]]
    if thrusters:
        out.append(("plume: thruster fired", (_rgb(PLUME_COLOR),)))
    if orbit:
        out += [("to the Sun", (_rgb(SUN_COLOR),)), ("to nadir (Earth)", (_rgb(NADIR_COLOR),))]
    return tuple(out)


@functools.cache
def _font() -> Any:
    from PIL import ImageFont

    # Pillow >= 10.1 has the bitmap font under this name (its load_default() then gives a
    # FreeType font, whose pixels follow the FreeType version); older ones under load_default.
    return getattr(ImageFont, "load_default_imagefont", ImageFont.load_default)()


def readout_lines(time_s: float, pointing_error_deg: float, body_rates: ArrayLike) -> list[str]:
    """The readout's text: time (s), pointing error (deg), body rates (deg/s, body frame).

    Args:
        time_s: simulated time since the episode started, s.
        pointing_error_deg: rotation angle from the target attitude to the body's, deg.
        body_rates: (3,) angular velocity in the body frame, rad/s (shown in deg/s).

    Raises:
        ValueError: naming the value that is not finite or of the wrong shape.
    """
    for name, value in (("time_s", time_s), ("pointing_error_deg", pointing_error_deg)):
        if not isinstance(value, numbers.Real) or isinstance(value, bool) or not math.isfinite(value):
            raise ValueError(f"{name} must be a finite number, got {value!r}")
    rates = np.asarray(body_rates, dtype=np.float64)
    if rates.shape != (3,) or not np.all(np.isfinite(rates)):
        raise ValueError(
            f"body_rates must be 3 finite numbers (rad/s), got {np.asarray(body_rates).tolist()!r}"
        )
    x, y, z = np.degrees(rates)
    return [
        f"t = {time_s:.2f} s",
        f"error to target {pointing_error_deg:.2f} deg",
        "body rates, deg/s:",
        f"x {x:+.2f}  y {y:+.2f}  z {z:+.2f}",
    ]


def _text_size(lines: list[str]) -> tuple[int, int]:
    """Width and height in pixels of ``lines`` set one under the other."""
    from PIL import Image, ImageDraw

    measure = ImageDraw.Draw(Image.new("RGB", (1, 1)))
    width = max(measure.textbbox((0, 0), line, font=_font())[2] for line in lines)
    return width, _LINE * len(lines)


def _layout(
    height: int, lines: list[str], legend: Legend
) -> tuple[tuple[int, int, int, int], tuple[int, int, int, int]]:
    """The legend's and the readout's boxes ``(x0, y0, x1, y1)``, unclipped, on a frame
    ``height`` pixels high: each holds its text with a margin of :data:`_PAD`."""
    legend_w, legend_h = _text_size([label for label, _ in legend])
    readout_w, readout_h = _text_size(lines)
    legend = (_PAD, _PAD, 4 * _PAD + _SWATCH + legend_w, 3 * _PAD + legend_h)
    readout = (_PAD, height - 3 * _PAD - readout_h, 3 * _PAD + readout_w, height - _PAD)
    return legend, readout


def overlay_boxes(
    shape: tuple[int, ...],
    time_s: float,
    pointing_error_deg: float,
    body_rates: ArrayLike,
    legend: Legend = LEGEND,
) -> tuple[tuple[int, int, int, int], tuple[int, int, int, int]]:
    """The legend's and the readout's boxes on a frame of ``shape`` (H, W, 3), each
    ``(x0, y0, x1, y1)`` in pixels, x1 and y1 excluded, clipped to the frame: the only
    pixels :func:`draw_overlay` changes with this ``legend``.

    Raises:
        ValueError: as :func:`readout_lines`.
    """
    height, width = shape[0], shape[1]
    boxes = _layout(height, readout_lines(time_s, pointing_error_deg, body_rates), legend)
    legend, readout = (
        (min(max(x0, 0), width), min(max(y0, 0), height), min(max(x1, 0), width), min(max(y1, 0), height))
        for x0, y0, x1, y1 in boxes
    )
    return legend, readout


def draw_overlay(
    frame: np.ndarray,
    *,
    time_s: float,
    pointing_error_deg: float,
    body_rates: ArrayLike,
    legend: Legend = LEGEND,
) -> np.ndarray:
    """``frame`` with a legend of the scene's colours and a readout of the state.

    Args:
        frame: (H, W, 3) uint8 RGB frame (not modified).
        time_s: simulated time since the episode started, s.
        pointing_error_deg: rotation angle from the target attitude to the body's, deg.
        body_rates: (3,) angular velocity in the body frame, rad/s (shown in deg/s).
        legend: its entries (:func:`legend_of` the scene drawn).

    Returns:
        A new (H, W, 3) contiguous uint8 frame, equal to ``frame`` outside
        :func:`overlay_boxes`.

    Raises:
        ValueError: for a frame that is not an (H, W, 3) uint8 array, or a value that is
            not finite or of the wrong shape (named).
    """
    if not isinstance(frame, np.ndarray) or frame.ndim != 3 or frame.shape[2] != 3 or frame.dtype != np.uint8:
        raise ValueError(
            f"frame must be an (H, W, 3) uint8 array, got {type(frame).__name__} of shape "
            f"{np.shape(frame)} and dtype {getattr(frame, 'dtype', None)}"
        )
    from PIL import Image, ImageDraw

    lines = readout_lines(time_s, pointing_error_deg, body_rates)
    box, readout = _layout(frame.shape[0], lines, legend)
    out = np.array(frame, dtype=np.uint8, order="C")
    for x0, y0, x1, y1 in (box, readout):
        paper = out[max(y0, 0) : max(y1, 0), max(x0, 0) : max(x1, 0)]
        paper[...] = np.rint(_SHOW_THROUGH * paper + (1.0 - _SHOW_THROUGH) * _PAPER).astype(np.uint8)
    image = Image.fromarray(out)
    # Everything is drawn inside the unclipped boxes, so Pillow's clipping at the frame's
    # edges keeps it inside the clipped ones.
    draw = ImageDraw.Draw(image)
    x0, y0 = box[:2]
    for k, (label, colours) in enumerate(legend):
        top = y0 + _PAD + k * _LINE
        part = _SWATCH // len(colours)
        for j, colour in enumerate(colours):
            left = x0 + _PAD + j * part
            draw.rectangle((left, top + 2, left + part - 2, top + 8), fill=colour)
        draw.text((x0 + 2 * _PAD + _SWATCH, top), label, font=_font(), fill=_INK)
    x0, y0 = readout[:2]
    for k, line in enumerate(lines):
        draw.text((x0 + _PAD, y0 + _PAD + k * _LINE), line, font=_font(), fill=_INK)
    return np.ascontiguousarray(np.asarray(image, dtype=np.uint8))
