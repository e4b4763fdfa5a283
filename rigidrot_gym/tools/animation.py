"""A side-by-side animation of one tumbler integrated by several methods
(``rigidrot crosscheck --animation``).

The intermediate-axis tumbler of :data:`~rigidrot_gym.tools.crosscheck.PROBLEMS` starts
identically in every tile and is integrated at one step ``dt`` by each method (the
exact solution is sampled, not stepped); each tile draws the body with
:class:`~rigidrot_gym.render.BodyRenderer` (its ellipsoid of inertia, its axes, ω and L)
under the method's name and its attitude error against the exact solution, with a clock
above. Written as a GIF (Pillow), 32 colours per frame, no dithering.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from rigidrot_gym.physics.rotation import quaternion as quat
from rigidrot_gym.physics.rotation.exact import torque_free
from rigidrot_gym.physics.rotation.propagate import propagate
from rigidrot_gym.render import BodyRenderer, tile
from rigidrot_gym.tools.crosscheck import PROBLEMS, Q0

ANIMATED = ("exact", "pybullet", "mujoco_implicitfast", "semi_implicit")
CAPTIONS = {
    "exact": "exact solution",
    "pybullet": "PyBullet multibody",
    "mujoco_implicitfast": "MuJoCo implicitfast",
    "semi_implicit": "game step (no gyro)",
}
_BANNER = 34  # px above the tiles for the clock


def trajectories(methods, duration: float, dt: float, every: int) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Attitudes and body rates of the tumbler, every ``every`` steps of ``dt``, per method."""
    problem = PROBLEMS[0]
    steps = round(duration / dt)
    out = {}
    for method in methods:
        if method == "exact":
            q, w = torque_free(Q0, problem.omega0, problem.inertia, dt * np.arange(0, steps + 1, every))
        else:
            traj = propagate(Q0, problem.omega0, problem.inertia, dt, steps, method=method)
            q, w = traj.q[::every], traj.omega[::every]
        out[method] = (q, w)
    return out


def _font(size: int):
    """DejaVu Sans (shipped with matplotlib; it has ω and °) at ``size`` px."""
    from matplotlib import font_manager
    from PIL import ImageFont

    return ImageFont.truetype(font_manager.findfont("DejaVu Sans"), size)


def side_by_side(
    path: Path,
    methods=ANIMATED,
    duration: float = 33.0,
    dt: float = 1 / 60,
    fps: int = 6,
    size: int = 160,
    quick: bool = False,
) -> Path:
    """Write the animation to ``path`` (a ``.gif``) and return it.

    Args:
        methods: registered method names, or ``"exact"`` for the exact solution.
        duration: simulated seconds; the tumbler flips every 11 s.
        dt: the integration step of every method, s (1/60: a game engine's rate).
        fps: frames per simulated second (1/(fps·dt) must be a whole number of steps).
        size: tile width and height, px.
        quick: 3 s at 4 fps and 96 px tiles (for tests).
    """
    from PIL import Image, ImageDraw

    if quick:
        duration, fps, size = 3.0, 4, 96
    every = round(1 / (fps * dt))
    if every < 1 or abs(every * fps * dt - 1.0) > 1e-9:
        raise ValueError(f"1/(fps·dt) must be a whole number of steps, got fps = {fps}, dt = {dt}")
    problem = PROBLEMS[0]
    runs = trajectories(methods, duration, dt, every)
    exact_q = (
        runs["exact"][0] if "exact" in runs else trajectories(["exact"], duration, dt, every)["exact"][0]
    )
    small, large = _font(max(9, size // 16)), _font(max(11, size // 12))
    frames = []
    with BodyRenderer(problem.inertia, width=size, height=size, camera_distance=3.6) as renderer:
        for i in range(len(exact_q)):
            tiles = []
            for method in methods:
                q, w = runs[method][0][i], runs[method][1][i]
                image = Image.fromarray(renderer.render(q, w))
                draw = ImageDraw.Draw(image)
                draw.text((4, 3), CAPTIONS.get(method, method), fill=(0, 0, 0), font=small)
                if method != "exact":
                    error = np.degrees(float(quat.angle_between(q, exact_q[i])))
                    draw.text((4, 3 + size // 14), f"error {error:5.1f}°", fill=(150, 0, 0), font=small)
                tiles.append(np.asarray(image))
            row = tile(tiles, len(tiles))
            frame = Image.new("RGB", (row.shape[1], row.shape[0] + _BANNER), (255, 255, 255))
            frame.paste(Image.fromarray(row), (0, _BANNER))
            clock = (
                f"t = {i / fps:5.1f} s    tumbler I = {problem.inertia} kg·m², ω0 = {problem.omega0} rad/s, "
                f"dt = 1/{round(1 / dt)} s"
            )
            ImageDraw.Draw(frame).text((6, 8), clock, fill=(0, 0, 0), font=large)
            frames.append(
                frame.quantize(colors=32, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
            )
    path.parent.mkdir(parents=True, exist_ok=True)
    frames[0].save(
        path, save_all=True, append_images=frames[1:], duration=round(1000 / fps), loop=0, optimize=True
    )
    return path
