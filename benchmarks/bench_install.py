"""What installing the plugin costs a project's pytest (issue 21), from fresh environments.

Two fresh virtual environments: *bare* holds pytest only; *installed* holds this project's
wheel (built here with ``pip wheel --no-deps``) with its dependencies and no extras, as a user's
``pip install pytest-opdecide`` gives, and the bare one gets the same pytest version. A project
with one passing test then runs ``python -m pytest -q -p no:cacheprovider`` in each, the two
sides alternating (after a warm-up run each, which writes the bytecode caches as a user's first
run does), and the figures are medians:

1. the one-test run's wall time with the plugin installed over the bare run's. Target: at most
   1.25 (the plugin costs at most 25 %);
2. the plugin's own share: the installed environment's run against the same run with
   ``-p no:opdecide`` (what its dependencies cost, chiefly anyio's pytest plugin, which
   httpx brings: anyio's plugin finds its event-loop backends when it loads). Target: at most
   1.10;
3. the pytest plugins the install registers besides ``opdecide`` (the ``pytest11`` entry points
   of the environment, less those of the bare one and httpx's ``anyio``). Target: none.

    python -m benchmarks install
    OPDECIDE_BENCH_BARE_PYTHON=/path/bare/bin/python \\
    OPDECIDE_BENCH_INSTALLED_PYTHON=/path/installed/bin/python python -m benchmarks install

The second form measures two environments made beforehand (the installed one must hold
pytest-opdecide); without them the benchmark builds both (about a minute, from the package
index pip is set up with). Wall time is what the user waits for; the CPU medians are in the note.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import Measurement

ROOT = Path(__file__).resolve().parents[1]
ROUNDS = 11
TARGET_RATIO = 1.25
ALLOWED_OTHERS = frozenset({"anyio"})
"""Plugins the install may register besides its own: anyio's comes with httpx."""

BARE_ENV = "OPDECIDE_BENCH_BARE_PYTHON"
INSTALLED_ENV = "OPDECIDE_BENCH_INSTALLED_PYTHON"

TEST = "def test_one():\n    assert 1 + 1 == 2\n"

# As users run pytest: with bytecode caches (the warm-up run writes them).
_ENV = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}

_PLUGINS = (
    "import importlib.metadata as m, json; "
    "print(json.dumps(sorted(e.name for e in m.entry_points(group='pytest11'))))"
)


def _check(command: list[str], cwd: Path | None = None) -> str:
    done = subprocess.run(command, capture_output=True, text=True, cwd=cwd, env=_ENV)
    if done.returncode != 0:
        raise RuntimeError(
            f"{' '.join(command)} failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}"
        )
    return done.stdout


def _venv(folder: Path) -> Path:
    _check([sys.executable, "-m", "venv", str(folder)])
    return folder / "bin" / "python"


def build_environments(root: Path) -> tuple[Path, Path]:
    """Fresh ``(bare, installed)`` environments under ``root``: their pythons."""
    wheels = root / "wheels"
    _check(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(wheels), str(ROOT)]
    )
    (wheel,) = wheels.glob("pytest_opdecide-*.whl")
    installed = _venv(root / "installed")
    _check([str(installed), "-m", "pip", "install", "--quiet", str(wheel)])
    pytest_version = _check(
        [str(installed), "-c", "import importlib.metadata as m; print(m.version('pytest'))"]
    ).strip()
    bare = _venv(root / "bare")
    _check([str(bare), "-m", "pip", "install", "--quiet", f"pytest=={pytest_version}"])
    return bare, installed


def _plugins(python: Path) -> list[str]:
    names: list[str] = json.loads(_check([str(python), "-c", _PLUGINS]))
    return names


def _one_run(python: Path, project: Path, *arguments: str) -> tuple[float, float]:
    """One pytest run: (wall seconds, CPU seconds of the child)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", *arguments],
        cwd=project,
        capture_output=True,
        text=True,
        env=_ENV,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0 or "1 passed" not in done.stdout:
        raise RuntimeError(f"{python} -m pytest failed in {project}:\n{done.stdout[-3000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def measure(bare: Path, installed: Path, project: Path, rounds: int = ROUNDS) -> list[Measurement]:
    """The figures for two environments' pythons, on the one-test ``project``."""
    sides: dict[str, tuple[Path, tuple[str, ...]]] = {
        "bare": (bare, ()),
        "installed": (installed, ()),
        "disabled": (installed, ("-p", "no:opdecide")),
    }
    for python, arguments in sides.values():  # warm-up: bytecode caches, file system caches
        _one_run(python, project, *arguments)
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in sides}
    for _ in range(rounds):
        for name, (python, arguments) in sides.items():
            samples[name].append(_one_run(python, project, *arguments))
    medians = {
        name: (statistics.median(s[0] for s in runs), statistics.median(s[1] for s in runs))
        for name, runs in samples.items()
    }
    (bare_wall, bare_cpu), (wall, cpu) = medians["bare"], medians["installed"]
    off_wall, off_cpu = medians["disabled"]
    before = set(_plugins(bare))
    registered = [name for name in _plugins(installed) if name not in before]
    others = [name for name in registered if name != "opdecide" and name not in ALLOWED_OTHERS]
    return [
        Measurement(
            name="one-test pytest run, plugin installed / bare pytest (wall, fresh venvs)",
            value=wall / bare_wall,
            unit="x",
            target=TARGET_RATIO,
            note=(
                f"wall {wall:.3f} s vs baseline {bare_wall:.3f} s; CPU {cpu:.3f} s vs "
                f"{bare_cpu:.3f} s ({cpu / bare_cpu:.2f}x); median of {rounds} interleaved runs"
            ),
        ),
        Measurement(
            name="the plugin's own share: installed / installed with -p no:opdecide (wall)",
            value=wall / off_wall,
            unit="x",
            target=1.10,
            note=(
                f"wall {wall:.3f} s vs {off_wall:.3f} s ({(wall - off_wall) * 1000:+.0f} ms); "
                f"CPU {cpu:.3f} s vs {off_cpu:.3f} s ({(cpu - off_cpu) * 1000:+.0f} ms)"
            ),
        ),
        Measurement(
            name="pytest plugins registered besides opdecide (and httpx's anyio)",
            value=len(others),
            unit="plugins",
            target=0,
            note=f"the install registers: {', '.join(registered) or 'nothing'}",
        ),
    ]


def run() -> list[Measurement]:
    with tempfile.TemporaryDirectory(prefix="opdecide-install-") as tmp:
        root = Path(tmp)
        given_bare, given_installed = os.environ.get(BARE_ENV), os.environ.get(INSTALLED_ENV)
        if given_bare and given_installed:
            bare, installed = Path(given_bare), Path(given_installed)
        elif given_bare or given_installed:
            raise RuntimeError(f"set both {BARE_ENV} and {INSTALLED_ENV}, or neither")
        else:
            bare, installed = build_environments(root)
        project = root / "project"
        project.mkdir()
        (project / "test_one.py").write_text(TEST)
        return measure(bare, installed, project)
