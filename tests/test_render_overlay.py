"""The ``overlay`` render option: a legend and a readout on ``rgb_array`` frames, nothing
else changed, and plain frames bit for bit as before."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import rigidrot_gym  # noqa: F401  (registers the ids)
from rigidrot_gym.render import BodyRenderer
from rigidrot_gym.render import overlay as overlay_module
from rigidrot_gym.render.overlay import draw_overlay, overlay_boxes, readout_lines

SIZE = {"width": 320, "height": 240}
ENV_ID = "RigidRot/Reorient-v0"


def _outside(shape, boxes) -> np.ndarray:
    """(H, W) mask of the pixels in none of ``boxes``."""
    mask = np.ones(shape[:2], dtype=bool)
    for x0, y0, x1, y1 in boxes:
        mask[y0:y1, x0:x1] = False
    return mask


def _stepped(options: dict, steps: int, seed: int = 0):
    env = gym.make(ENV_ID, render_mode="rgb_array", render_options=options)
    env.reset(seed=seed)
    for _ in range(steps):
        env.step(np.array([1.0, -0.5, 0.25], dtype=np.float32))
    return env


def test_plain_frames_are_the_renderers_own_with_the_option_off_or_absent():
    absent, off = _stepped(SIZE, 3), _stepped({**SIZE, "overlay": False}, 3)
    u = absent.unwrapped
    # reference: a renderer of its own, called with the env's state
    with BodyRenderer(u.inertia, **SIZE) as renderer:
        reference = renderer.render(u.attitude, u.body_rates, u.target)
    np.testing.assert_array_equal(absent.render(), reference)
    np.testing.assert_array_equal(off.render(), reference)
    absent.close()
    off.close()


def test_the_overlay_changes_only_its_boxes_and_what_it_shows_is_the_state():
    plain, drawn = _stepped(SIZE, 4), _stepped({**SIZE, "overlay": True}, 4)
    u = drawn.unwrapped
    frame, reference = drawn.render(), plain.render()
    assert frame.shape == reference.shape and frame.dtype == np.uint8
    # the state as the test computes it: 4 periods of dt; the angle of q_target⁻¹ ⊗ q
    time_s = 4 * u.scenario.dt
    error = np.degrees(2.0 * np.arccos(min(1.0, abs(float(np.dot(u.attitude, u.target))))))
    boxes = overlay_boxes(frame.shape, time_s, error, u.body_rates)
    outside = _outside(frame.shape, boxes)
    np.testing.assert_array_equal(frame[outside], reference[outside])
    assert not np.array_equal(frame, reference)
    # small boxes in the left corners: the body in the middle stays in view
    legend, readout = boxes
    assert legend[:2] == (4, 4) and readout[3] == 240 - 4
    assert (~outside).sum() < 0.3 * outside.size
    assert max(legend[2], readout[2]) < 0.6 * 320
    np.testing.assert_array_equal(
        frame, draw_overlay(reference, time_s=time_s, pointing_error_deg=error, body_rates=u.body_rates)
    )
    plain.close()
    drawn.close()


def test_the_env_hands_the_overlay_the_true_time_error_and_rates(monkeypatch):
    seen = []

    def spy(frame, **values):
        seen.append(values)
        return frame

    monkeypatch.setattr(overlay_module, "draw_overlay", spy)
    env = _stepped({**SIZE, "overlay": True}, 7, seed=3)
    env.render()
    u = env.unwrapped
    (values,) = seen
    assert values["time_s"] == pytest.approx(7 * u.scenario.dt)
    cos_half = min(1.0, abs(float(np.dot(u.attitude, u.target))))
    assert values["pointing_error_deg"] == pytest.approx(np.degrees(2.0 * np.arccos(cos_half)), abs=1e-6)
    np.testing.assert_array_equal(values["body_rates"], u.body_rates)
    env.close()


def test_a_different_time_or_error_gives_different_readout_pixels_and_the_same_legend():
    frame = np.full((240, 320, 3), 200, dtype=np.uint8)
    rates = np.array([0.01, -0.02, 0.03])
    base = draw_overlay(frame, time_s=1.0, pointing_error_deg=10.0, body_rates=rates)
    later = draw_overlay(frame, time_s=2.5, pointing_error_deg=10.0, body_rates=rates)
    nearer = draw_overlay(frame, time_s=1.0, pointing_error_deg=3.0, body_rates=rates)
    (lx0, ly0, lx1, ly1), (rx0, ry0, rx1, ry1) = overlay_boxes(frame.shape, 1.0, 10.0, rates)
    for other in (later, nearer):
        assert not np.array_equal(other[ry0:ry1, rx0:rx1], base[ry0:ry1, rx0:rx1])
        np.testing.assert_array_equal(other[ly0:ly1, lx0:lx1], base[ly0:ly1, lx0:lx1])
    np.testing.assert_array_equal(frame, np.full((240, 320, 3), 200, dtype=np.uint8))  # input untouched


def test_two_envs_in_different_states_read_out_differently():
    frames = [_stepped({**SIZE, "overlay": True}, n).render() for n in (1, 6)]
    _, (_, ry0, _, ry1) = overlay_boxes((240, 320, 3), 0.0, 0.0, np.zeros(3))
    # The ink alone: the paper lets a quarter of the scene through, so nothing under it
    # is darker than 0.75 · 255 but the text.
    ink = [(f[ry0:ry1, :160] < 100).all(axis=-1) for f in frames]
    assert ink[0].any() and not np.array_equal(ink[0], ink[1])


def test_readout_text_in_stated_units():
    lines = readout_lines(12.345, 45.0, [0.0, np.pi / 180.0, -np.pi / 90.0])
    assert lines == [
        "t = 12.35 s",
        "error to target 45.00 deg",
        "body rates, deg/s:",
        "x +0.00  y +1.00  z -2.00",
    ]


def test_a_frame_smaller_than_the_boxes_is_changed_inside_them_only():
    frame = np.zeros((30, 40, 3), dtype=np.uint8)
    out = draw_overlay(frame, time_s=0.0, pointing_error_deg=0.0, body_rates=np.zeros(3))
    assert out.shape == frame.shape
    boxes = overlay_boxes(frame.shape, 0.0, 0.0, np.zeros(3))
    assert all(0 <= x0 <= x1 <= 40 and 0 <= y0 <= y1 <= 30 for x0, y0, x1, y1 in boxes)
    np.testing.assert_array_equal(out[_outside(frame.shape, boxes)], 0)


@pytest.mark.parametrize("value", ["yes", 1, 0, None, 1.0])
def test_a_bad_overlay_value_fails_at_construction(value):
    match = rf"overlay must be True or False, got {value!r}"
    with pytest.raises(ValueError, match=match):
        gym.make(ENV_ID, render_mode="rgb_array", render_options={"overlay": value})
    with pytest.raises(ValueError, match=match):
        gym.make_vec(ENV_ID, num_envs=2, render_mode="rgb_array", render_options={"overlay": value})


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"frame": np.zeros((8, 8), dtype=np.uint8)}, r"frame must be an \(H, W, 3\) uint8 array"),
        ({"frame": np.zeros((8, 8, 3))}, r"frame must be an \(H, W, 3\) uint8 array.*float64"),
        ({"time_s": float("nan")}, r"time_s must be a finite number, got nan"),
        ({"pointing_error_deg": "10"}, r"pointing_error_deg must be a finite number, got '10'"),
        ({"body_rates": [0.0, 1.0]}, r"body_rates must be 3 finite numbers"),
    ],
)
def test_draw_overlay_names_a_bad_argument(kwargs, match):
    values = {
        "frame": np.zeros((60, 80, 3), dtype=np.uint8),
        "time_s": 0.0,
        "pointing_error_deg": 0.0,
        "body_rates": np.zeros(3),
    }
    values.update(kwargs)
    frame = values.pop("frame")
    with pytest.raises(ValueError, match=match):
        draw_overlay(frame, **values)


def test_a_vector_env_draws_each_rows_own_readout():
    options = {"width": 160, "height": 120}
    plain = gym.make_vec(ENV_ID, 2, render_mode="rgb_array", render_options=options)
    drawn = gym.make_vec(ENV_ID, 2, render_mode="rgb_array", render_options={**options, "overlay": True})
    plain.reset(seed=5)
    drawn.reset(seed=5)
    batch = drawn.unwrapped.batch
    q, w = batch.body_state()
    for i, (frame, reference) in enumerate(zip(drawn.render(), plain.render(), strict=True)):
        error = np.degrees(2.0 * np.arccos(min(1.0, abs(float(np.dot(q[i], batch.target[i]))))))
        expected = draw_overlay(reference, time_s=0.0, pointing_error_deg=error, body_rates=w[i])
        np.testing.assert_array_equal(frame, expected)
    plain.close()
    drawn.close()
