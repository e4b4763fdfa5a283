"""What compiled libraries print: kept off standard output, banners dropped
(:mod:`rigidrot_gym.physics.plumbing.quiet`), and a process that renders and runs every engine
prints on stdout only what it prints itself.

Each case runs in a fresh interpreter, its stdout a pipe that C's stdio buffers fully
(``PYTHONUNBUFFERED`` unset: it makes C's streams unbuffered too), so output that escaped
the capture into a buffer still comes out, at exit.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from rigidrot_gym.physics.plumbing import quiet

# A stand-in for a compiled library: it prints from C on import, to both descriptors, a
# banner among the lines, through C's buffered stdio as well as straight to the descriptor.
FAKE_LIBRARY = """
import ctypes, os
os.write(1, b"written to fd 1\\n")
ctypes.CDLL(None).printf(b"printf to stdout\\n")
os.write(2, b"fakelib build time: today\\n")
os.write(2, b"a warning on fd 2\\n")
"""


def _run(code: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    return out


@pytest.mark.skipif(sys.platform == "win32", reason="the stand-in library calls the C library's printf")
def test_what_an_import_prints_goes_to_stderr_less_its_banner(tmp_path):
    (tmp_path / "fakelib.py").write_text(FAKE_LIBRARY)
    out = _run(
        """
        from rigidrot_gym.physics.plumbing import quiet
        quiet.BANNERS["fakelib"] = "fakelib build time:"
        print("before", flush=True)
        quiet.import_quietly("fakelib")
        print("after")
        quiet.import_quietly("fakelib")  # imported: nothing printed again
        """,
        tmp_path,
    )
    assert out.stdout == "before\nafter\n"
    # printf's line waits in C's buffer until the capture flushes it: the order differs
    assert sorted(out.stderr.splitlines()) == ["a warning on fd 2", "printf to stdout", "written to fd 1"]


def test_a_failed_import_restores_the_streams_and_shows_what_it_printed(tmp_path):
    (tmp_path / "brokenlib.py").write_text(
        'import os\nos.write(1, b"why it fails\\n")\nraise ImportError("no")\n'
    )
    out = _run(
        """
        from rigidrot_gym.physics.plumbing import quiet
        try:
            quiet.import_quietly("brokenlib")
        except ImportError as e:
            print("raised", e)
        """,
        tmp_path,
    )
    assert out.stdout == "raised no\n"
    assert out.stderr == "why it fails\n"


def test_without_a_writable_temp_folder_the_output_is_let_through(monkeypatch, capfd):
    def refuse(*args, **kwargs):
        raise FileNotFoundError("no usable temporary directory")

    monkeypatch.setattr(quiet.tempfile, "TemporaryFile", refuse)
    with quiet.c_output_to_stderr():
        print("still printed", flush=True)
    assert capfd.readouterr().out == "still printed\n"


@pytest.mark.engines
def test_rendering_and_every_engine_print_nothing_on_stdout(tmp_path):
    pytest.importorskip("pybullet")
    methods = ["pybullet", "pybullet_maximal"]
    methods += ["mujoco_euler"] if importlib.util.find_spec("mujoco") else []
    methods += ["basilisk_rk4"] if importlib.util.find_spec("Basilisk") else []
    out = _run(
        f"""
        import gymnasium as gym
        from rigidrot_gym import propagate
        print("start")
        env = gym.make("RigidRot/Reorient-v0", render_mode="rgb_array")
        env.reset(seed=0)
        frame = env.render()
        env.close()
        for method in {methods!r}:
            propagate([1, 0, 0, 0], [0.1, 1, 0], [1, 2, 3], 0.01, 3, method=method)
        print("frame", frame.shape)
        """,
        tmp_path,
    )
    assert out.stdout == "start\nframe (480, 640, 3)\n"
    assert "pybullet build time" not in out.stderr
