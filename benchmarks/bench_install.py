"""What installing the plugin costs a project's pytest (issue 21), from fresh environments.

Three fresh virtual environments: *bare* holds pytest only; *agent project* holds pytest and
httpx, as every project that talks to a model over HTTP has (the openai, anthropic, pydantic-ai
and litellm SDKs all depend on httpx); *installed* holds this project's wheel (built here with
``pip wheel --no-deps``) with its dependencies and no extras, as a user's
``pip install pytest-opdecide`` gives. The other two get the same pytest (and httpx) versions.
A project with one passing test then runs ``python -m pytest -q -p no:cacheprovider`` in each,
the sides alternating (after a warm-up run each, which writes the bytecode caches as a user's
first run does), and the figures are medians:

1. what installing the plugin costs an agent project's pytest: the one-test run's wall time
   with the plugin installed over the agent project's. Target: at most 1.25;
2. the same against bare pytest. Target: at most 1.25, **missed by design of a dependency**:
   httpx (a hard dependency: the real runtimes, providers and cassettes use it) brings anyio,
   whose pytest plugin loads in every pytest run of the environment and looks for its
   event-loop backends as it loads, importing asyncio's whole stack (about 0.4 of bare
   pytest's run, in the note). A project with httpx already pays it; one without pays it on
   installing the plugin;
3. the plugin's own share: the installed environment's run against the same run with
   ``-p no:opdecide``. Target: at most 1.10;
4. the pytest plugins the install registers besides ``opdecide`` (the ``pytest11`` entry points
   of the environment, less those of the bare one and httpx's ``anyio``). Target: none.

    python -m benchmarks install
    OPDECIDE_BENCH_BARE_PYTHON=/path/bare/bin/python \\
    OPDECIDE_BENCH_HTTPX_PYTHON=/path/agent/bin/python \\
    OPDECIDE_BENCH_INSTALLED_PYTHON=/path/installed/bin/python python -m benchmarks install

The second form measures three environments made beforehand (the installed one must hold
pytest-opdecide); without them the benchmark builds all three (about a minute, from the package
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
HTTPX_ENV = "OPDECIDE_BENCH_HTTPX_PYTHON"

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


def build_environments(root: Path) -> tuple[Path, Path, Path]:
    """Fresh ``(bare, agent project, installed)`` environments under ``root``: their pythons."""
    wheels = root / "wheels"
    _check(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(wheels), str(ROOT)]
    )
    (wheel,) = wheels.glob("pytest_opdecide-*.whl")
    installed = _venv(root / "installed")
    _check([str(installed), "-m", "pip", "install", "--quiet", str(wheel)])
    versions = json.loads(
        _check(
            [
                str(installed),
                "-c",
                "import importlib.metadata as m, json; "
                "print(json.dumps([m.version('pytest'), m.version('httpx')]))",
            ]
        )
    )
    bare = _venv(root / "bare")
    _check([str(bare), "-m", "pip", "install", "--quiet", f"pytest=={versions[0]}"])
    agent = _venv(root / "agent")
    _check(
        [
            str(agent),
            "-m",
            "pip",
            "install",
            "--quiet",
            f"pytest=={versions[0]}",
            f"httpx=={versions[1]}",
        ]
    )
    return bare, agent, installed


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


def measure(
    bare: Path, agent: Path, installed: Path, project: Path, rounds: int = ROUNDS
) -> list[Measurement]:
    """The figures for three environments' pythons, on the one-test ``project``."""
    sides: dict[str, tuple[Path, tuple[str, ...]]] = {
        "bare": (bare, ()),
        "agent": (agent, ()),
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
    agent_wall, agent_cpu = medians["agent"]
    off_wall, off_cpu = medians["disabled"]
    before = set(_plugins(bare))
    registered = [name for name in _plugins(installed) if name not in before]
    others = [name for name in registered if name != "opdecide" and name not in ALLOWED_OTHERS]
    return [
        Measurement(
            name="one-test pytest run, plugin installed / pytest + httpx (wall, fresh venvs)",
            value=wall / agent_wall,
            unit="x",
            target=TARGET_RATIO,
            note=(
                f"wall {wall:.3f} s vs baseline {agent_wall:.3f} s; CPU {cpu:.3f} s vs "
                f"{agent_cpu:.3f} s ({cpu / agent_cpu:.2f}x); median of {rounds} interleaved runs"
            ),
        ),
        Measurement(
            name="one-test pytest run, plugin installed / bare pytest (wall, fresh venvs)",
            value=wall / bare_wall,
            unit="x",
            target=TARGET_RATIO,
            note=(
                f"wall {wall:.3f} s vs baseline {bare_wall:.3f} s; CPU {cpu:.3f} s vs "
                f"{bare_cpu:.3f} s ({cpu / bare_cpu:.2f}x); of it, httpx's anyio plugin alone: "
                f"pytest + httpx is {agent_wall / bare_wall:.2f}x bare pytest (wall), "
                f"{agent_cpu / bare_cpu:.2f}x (CPU)"
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
        given = [os.environ.get(name) for name in (BARE_ENV, HTTPX_ENV, INSTALLED_ENV)]
        if all(given):
            bare, agent, installed = (Path(python) for python in given if python)
        elif any(given):
            raise RuntimeError(f"set all of {BARE_ENV}, {HTTPX_ENV} and {INSTALLED_ENV}, or none")
        else:
            bare, agent, installed = build_environments(root)
        project = root / "project"
        project.mkdir()
        (project / "test_one.py").write_text(TEST)
        return measure(bare, agent, installed, project)
