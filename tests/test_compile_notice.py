"""The one-line notice when numba compiles this package's kernels: printed once, to stderr,
when they are compiled, and not when they are loaded from the cache."""

from __future__ import annotations

import os
import subprocess
import sys

from rigidrot_gym.physics.jit import COMPILE_NOTICE

# Two signatures of a small kernel: two compilations in one process.
CODE = (
    "import numpy as np\n"
    "from rigidrot_gym.attitude.actuation import clip_actions\n"
    "a = np.zeros((2, 3))\n"
    "rows = np.arange(2)\n"
    "clip_actions(a, rows, a.copy())\n"
    "clip_actions(a.astype(np.float32), rows, a.copy())\n"
    "print('done')\n"
)


def _run(cache) -> subprocess.CompletedProcess:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
    return subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, env=env, check=True)


def test_notice_once_when_compiling_and_never_when_loading(tmp_path):
    compiling = _run(tmp_path)
    assert compiling.stderr.count(COMPILE_NOTICE) == 1
    assert COMPILE_NOTICE not in compiling.stdout and compiling.stdout.strip() == "done"
    assert any(tmp_path.rglob("*.nbi"))  # the kernels went to this cache
    loading = _run(tmp_path)
    assert COMPILE_NOTICE not in loading.stderr
