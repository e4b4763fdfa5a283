"""The one-line notice when numba compiles this package's kernels: printed once, to stderr,
when they are compiled, and not when they are loaded from the cache."""

from __future__ import annotations

import os
import subprocess
import sys

from rigidrot_gym.physics.plumbing.jit import COMPILE_NOTICE

# Two signatures of a small kernel: two compilations in one process.
CODE = (
    "import numpy as np\n"
    "from rigidrot_gym.tools.bench.phases import arithmetic_peak, _multiply_add\n"
    "_multiply_add(np.ones(4), 0.5, 0.1, 1)\n"
    "_multiply_add(np.ones(4, dtype=np.float32), 0.5, 0.1, 1)\n"
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
