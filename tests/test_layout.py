"""The package's layers: arrows only point down, and the physics layer needs no Gymnasium.

Layers (README, "Layout"): tools → control → attitude → physics; engines and render →
physics; attitude may draw with render. Checked on the source (every ``import`` statement,
lazy ones inside functions included), and in fresh interpreters on what an import loads.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import rigidrot_gym

PACKAGE = Path(rigidrot_gym.__file__).resolve().parent
# What each layer may import from the package (besides itself). The top-level __init__ is
# the package's front door and may load anything (it loads the upper layers lazily).
ALLOWED = {
    "physics": set(),
    "engines": {"physics"},
    "render": {"physics"},
    "attitude": {"physics", "render"},
    "control": {"attitude", "physics"},
    "tools": {"control", "attitude", "engines", "render", "physics"},
}
# Third-party packages the physics layer may import: the numerical stack only.
PHYSICS_THIRD_PARTY = {"numpy", "numba", "llvmlite", "scipy"}  # llvmlite: numba's own compiler backend


def _modules(root: Path = PACKAGE) -> list[Path]:
    return sorted(p for p in root.rglob("*.py") if p != root / "__init__.py")


def _layer(path: Path, root: Path = PACKAGE) -> str:
    return path.relative_to(root).parts[0]


def _imports(path: Path) -> list[tuple[int, str]]:
    """(line, absolute module name) of every import in ``path``, lazy ones included."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{path}:{node.lineno}: relative import; the package uses absolute ones"
            base = node.module or ""
            if base == "rigidrot_gym":
                found += [(node.lineno, f"rigidrot_gym.{alias.name}") for alias in node.names]
            else:
                found.append((node.lineno, base))
    return found


def _violations(root: Path) -> list[str]:
    """Imports of the package tree at ``root`` that point up or sideways."""
    found = []
    for path in _modules(root):
        layer = _layer(path, root)
        for line, name in _imports(path):
            parts = name.split(".")
            if parts[0] != "rigidrot_gym":
                continue
            # The front door (``import rigidrot_gym``) loads every layer: only tools may use it.
            target = parts[1] if len(parts) > 1 else "tools"
            if target != layer and target not in ALLOWED.get(layer, ()):
                found.append(f"{path.relative_to(root)}:{line} ({layer}) imports {name}")
    return found


def test_every_module_is_in_a_layer():
    layers = {_layer(p) for p in _modules()}
    assert layers == set(ALLOWED), f"modules outside the layers: {sorted(layers - set(ALLOWED))}"


def test_imports_only_point_down():
    assert not _violations(PACKAGE), "imports against the layering:\n" + "\n".join(_violations(PACKAGE))


@pytest.mark.parametrize(
    ("layer", "statement"),
    [
        ("physics", "def f():\n    from rigidrot_gym.attitude import env\n"),
        ("physics", "import rigidrot_gym\n"),
        ("attitude", "from rigidrot_gym import control\n"),
        ("engines", "from rigidrot_gym.render.frames import tile\n"),
        ("control", "import rigidrot_gym.tools.cli\n"),
    ],
)
def test_the_check_catches_an_upward_import(tmp_path, layer, statement):
    (tmp_path / layer).mkdir()
    (tmp_path / layer / "bad.py").write_text(statement)
    assert len(_violations(tmp_path)) == 1


def test_physics_imports_only_the_numerical_stack():
    stdlib = set(sys.stdlib_module_names) | {"__future__"}
    foreign = []
    for path in _modules():
        if _layer(path) != "physics":
            continue
        for line, name in _imports(path):
            top = name.split(".")[0]
            if top not in stdlib and top != "rigidrot_gym" and top not in PHYSICS_THIRD_PARTY:
                foreign.append(f"{path.relative_to(PACKAGE)}:{line} imports {name}")
    assert not foreign, "\n".join(foreign)


def _fresh(code: str) -> str:
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


HEAVY = ("gymnasium", "pybullet", "torch", "matplotlib", "mujoco", "Basilisk", "ray", "stable_baselines3")


def test_physics_imports_no_gymnasium_pybullet_torch_or_matplotlib():
    loaded = _fresh(
        "import sys, rigidrot_gym.physics\n"
        "from rigidrot_gym import propagate\n"
        "propagate([1, 0, 0, 0], [0.1, 1, 0], [1, 2, 3], 0.01, 2, method='rk4')\n"
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))"
    )
    assert loaded == "[]"


@pytest.mark.parametrize(
    "code",
    [
        "import rigidrot_gym\nimport gymnasium as gym\n",
        "import gymnasium as gym\nimport rigidrot_gym\n",
        "import rigidrot_gym.physics\nimport gymnasium as gym\nimport rigidrot_gym\n",
    ],
    ids=["package-first", "gymnasium-first", "physics-first"],
)
def test_ids_are_registered_whatever_the_import_order(code):
    out = _fresh(
        code + "env = gym.make('RigidRot/Reorient-v0')\n"
        "print(env.spec.id, env.spec.max_episode_steps, type(env.unwrapped).__module__)"
    )
    assert out == "RigidRot/Reorient-v0 250 rigidrot_gym.attitude.env"


def test_make_with_the_module_prefix_in_a_fresh_interpreter():
    out = _fresh(
        "import gymnasium as gym\nenv = gym.make('rigidrot_gym:RigidRot/Detumble-v0')\nprint(env.spec.id)"
    )
    assert out == "RigidRot/Detumble-v0"


def test_public_names_are_importable_from_the_top_level():
    for name in rigidrot_gym.__all__:
        assert getattr(rigidrot_gym, name) is not None, name
    assert rigidrot_gym.AttitudeEnv.__module__ == "rigidrot_gym.attitude.env"
    assert "pybullet" in rigidrot_gym.integrators.names()
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        _ = rigidrot_gym.nope


def test_version_matches_the_distribution():
    from importlib.metadata import version

    assert rigidrot_gym.__version__ == version("rigidrot-gym") == "0.2.0"
