"""The package's layers: arrows only point down, and the physics layer needs no Gymnasium.

Layers (docs/index.md, "Layout"): tools → control → attitude → physics; engines and render →
physics; attitude may draw with render. Inside physics, floors: estimation → actuators and
sensors → environment → rotation → plumbing. Checked on the source (every ``import``
statement, lazy ones inside functions included), and in fresh interpreters on what an import
loads. The physics modules' old flat names (before the floors) still import, as the same
module objects; the package's own code uses the floors' names.
"""

from __future__ import annotations

import ast
import importlib
import pickle
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import rigidrot_gym
import rigidrot_gym.physics as physics

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
# The floors of the physics layer, bottom up: each may import only those of a lower rank.
# Actuators and sensors stand side by side (a sensor reads the environment; neither needs the
# other); the physics package's own __init__ stands above them all.
FLOORS = {"plumbing": 0, "rotation": 1, "environment": 2, "actuators": 3, "sensors": 3, "estimation": 4}
# Third-party packages the physics layer may import: the numerical stack only.
PHYSICS_THIRD_PARTY = {"numpy", "numba", "llvmlite", "scipy"}  # llvmlite: numba's own compiler backend


def _modules(root: Path = PACKAGE) -> list[Path]:
    return sorted(p for p in root.rglob("*.py") if p != root / "__init__.py")


def _layer(path: Path, root: Path = PACKAGE) -> str:
    return path.relative_to(root).parts[0]


def _floor(path: Path, root: Path = PACKAGE) -> str | None:
    """The physics floor ``path`` stands on; None outside the floors (physics/__init__.py)."""
    parts = path.relative_to(root).parts
    return parts[1] if parts[0] == "physics" and len(parts) > 2 else None


def _imports(path: Path) -> list[tuple[int, str]]:
    """(line, absolute module name) of every import in ``path``, lazy ones included."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{path}:{node.lineno}: relative import; the package uses absolute ones"
            base = node.module or ""
            # The names imported from these packages may be modules: each is its own target.
            if base in ("rigidrot_gym", "rigidrot_gym.physics"):
                found += [(node.lineno, f"{base}.{alias.name}") for alias in node.names]
            else:
                found.append((node.lineno, base))
    return found


def _violations(root: Path) -> list[str]:
    """Imports of the package tree at ``root`` that point up or sideways, or name a physics
    module by its old flat name."""
    found = []
    for path in _modules(root):
        layer, floor = _layer(path, root), _floor(path, root)
        for line, name in _imports(path):
            parts = name.split(".")
            if parts[0] != "rigidrot_gym":
                continue
            where = f"{path.relative_to(root)}:{line} ({layer}{'/' + floor if floor else ''}) imports {name}"
            # The front door (``import rigidrot_gym``) loads every layer: only tools may use it.
            target = parts[1] if len(parts) > 1 else "tools"
            if target != layer and target not in ALLOWED.get(layer, ()):
                found.append(where)
            elif target == "physics" and len(parts) > 2:
                below = parts[2]
                if below in physics._MOVED and not (len(parts) == 3 and below in physics.__all__):
                    found.append(f"{where}: an old name, now rigidrot_gym.physics.{physics._MOVED[below]}")
                elif floor is not None and below != floor and FLOORS.get(below, 99) >= FLOORS[floor]:
                    found.append(where)
            elif target == "physics" and floor is not None:
                found.append(where)  # the physics package's front door stands above its floors
    return found


def test_every_module_is_in_a_layer():
    layers = {_layer(p) for p in _modules()}
    assert layers == set(ALLOWED), f"modules outside the layers: {sorted(layers - set(ALLOWED))}"


def test_every_physics_module_is_on_a_floor():
    floors = {_floor(p) for p in _modules() if _layer(p) == "physics"} - {None}
    assert floors == set(FLOORS), f"physics modules off the floors: {sorted(floors - set(FLOORS))}"
    assert [p for p in (PACKAGE / "physics").glob("*.py") if p.name != "__init__.py"] == []


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
        ("physics/plumbing", "from rigidrot_gym.physics.rotation import quaternion\n"),
        ("physics/rotation", "from rigidrot_gym.physics.environment.earth import MU\n"),
        ("physics/sensors", "from rigidrot_gym.physics.actuators import reaction_wheels\n"),
        ("physics/environment", "from rigidrot_gym.physics import propagate\n"),
        ("physics/rotation/integrators", "from rigidrot_gym.physics.estimation import mekf\n"),
        ("physics/sensors", "from rigidrot_gym.physics import quaternion\n"),
        ("attitude", "import rigidrot_gym.physics.integrators.base\n"),
    ],
)
def test_the_check_catches_an_upward_import(tmp_path, layer, statement):
    (tmp_path / layer).mkdir(parents=True)
    (tmp_path / layer / "bad.py").write_text(statement)
    assert len(_violations(tmp_path)) == 1


@pytest.mark.parametrize(
    ("layer", "statement"),
    [
        ("physics/estimation", "from rigidrot_gym.physics.sensors.gyro import GyroModel\n"),
        ("physics/sensors", "from rigidrot_gym.physics.environment import earth, sun\n"),
        ("physics/rotation/integrators", "from rigidrot_gym.physics.rotation import quaternion\n"),
        ("attitude", "from rigidrot_gym.physics import propagate, torque_free\n"),
    ],
)
def test_the_check_lets_a_downward_import_pass(tmp_path, layer, statement):
    (tmp_path / layer).mkdir(parents=True)
    (tmp_path / layer / "good.py").write_text(statement)
    assert _violations(tmp_path) == []


def test_the_old_flat_names_import_as_the_very_same_modules():
    # Every module of the flat physics layer (at 207f493), by its old name: its file is gone,
    # and the name imports as its floor's module, one object (a package's submodules too),
    # first of the two names to be imported in a fresh interpreter or second.
    assert len(physics._MOVED) == 29
    pairs = []
    for old, new in physics._MOVED.items():
        # (a folder may linger in a checkout that predates the floors: its __pycache__)
        assert not (PACKAGE / "physics" / f"{old}.py").exists()
        assert not (PACKAGE / "physics" / old / "__init__.py").exists()
        pairs.append((old, new))
        module = importlib.import_module(f"rigidrot_gym.physics.{new}")
        subs = [info.name for info in pkgutil.iter_modules(getattr(module, "__path__", []))]
        pairs += [(f"{old}.{sub}", f"{new}.{sub}") for sub in subs]
    assert len(pairs) == 29 + 12  # integrators: its __init__'s eleven methods and base
    for old, new in pairs:
        assert importlib.import_module(f"rigidrot_gym.physics.{old}") is importlib.import_module(
            f"rigidrot_gym.physics.{new}"
        ), old
    for old in physics._MOVED:
        if old not in physics.__all__:  # propagate: the function, as before the floors
            assert getattr(physics, old) is importlib.import_module(f"rigidrot_gym.physics.{old}"), old
    # A pickle made before the floors names the old module; a new one names the floor.
    multiply = importlib.import_module("rigidrot_gym.physics.rotation.quaternion").multiply
    assert pickle.loads(b"crigidrot_gym.physics.quaternion\nmultiply\n.") is multiply
    assert b"rigidrot_gym.physics.rotation.quaternion" in pickle.dumps(multiply)
    old_names = [f"rigidrot_gym.physics.{old}" for old, _ in pairs]
    new_names = [f"rigidrot_gym.physics.{new}" for _, new in pairs]
    for first, then in ((old_names, new_names), (new_names, old_names)):
        code = (
            "import importlib, sys\n"
            f"first = [importlib.import_module(n) for n in {first!r}]\n"
            f"then = [importlib.import_module(n) for n in {then!r}]\n"
            "assert all(a is b for a, b in zip(first, then, strict=True))\n"
            "modules = {id(m): m for m in list(sys.modules.values())}.values()\n"
            "files = [m.__file__ for m in modules if getattr(m, '__file__', None)]\n"
            "print(len(files) - len(set(files)))"
        )
        assert _fresh(code) == "0", "a module loaded twice, as a copy"


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
