"""Hypothesis and faker are optional extras, loaded only where their feature is used.

Each registers a pytest plugin when installed (and faker a ``faker`` fixture), so a hard
dependency on them would cost every pytest run of a user's project. These tests run Python in a
subprocess where the two libraries cannot be imported (``None`` in ``sys.modules``, which is how
Python spells "not installed" to the import system), as in a project without the extras.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]

WITHOUT_EXTRAS = "import sys\nsys.modules['hypothesis'] = sys.modules['faker'] = None\n"


def run_without_extras(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", WITHOUT_EXTRAS + code],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )


def names(requirements: list[str]) -> list[str]:
    return [Requirement(text).name for text in requirements]


def test_hypothesis_and_faker_are_extras_not_dependencies() -> None:
    assert not {"hypothesis", "faker"} & set(names(PROJECT["dependencies"]))
    extras = PROJECT["optional-dependencies"]
    assert set(names(extras["strategies"])) == {"hypothesis", "faker"}
    assert names(extras["contexts"]) == ["faker"]
    # The project's own test environment installs every extra.
    assert "pytest-opdecide[strategies,contexts,report]" in extras["test"]


def test_the_plugin_and_the_fakes_load_without_them() -> None:
    done = run_without_extras(
        "import pytest_opdecide.plugin, fake_runtimes, pytest_opdecide.decision\n"
        "from fake_runtimes import ScriptedRuntime, pick\n"
        "from pytest_opdecide import decision\n"
        "runtime = ScriptedRuntime(pick('done'))\n"
        "assert decision.make('Pick.', {'done': 'DONE'}, runtime=runtime) == 'DONE'\n"
        "print(sorted(n for n in sys.modules if n.split('.')[0] in ('hypothesis', 'faker')"
        " and sys.modules[n] is not None))\n"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_loading_the_plugin_imports_neither(tmp_path: Path) -> None:
    # With both installed (as here), the plugin itself still imports neither.
    code = (
        "import sys, pytest_opdecide.plugin, fake_runtimes\n"
        "print(sorted({n.split('.')[0] for n in sys.modules} & {'hypothesis', 'faker'}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_strategies_without_the_extra_name_the_install_command() -> None:
    done = run_without_extras(
        "from pytest_opdecide import MissingExtra\n"
        "try:\n"
        "    import pytest_opdecide.strategies\n"
        "except MissingExtra as error:\n"
        "    print(error.library, error.extra, isinstance(error, ImportError))\n"
        "    print(error)\n"
    )
    assert done.returncode == 0, done.stderr
    first, *message = done.stdout.splitlines()
    assert first == "hypothesis strategies True"
    assert message == [
        "pytest_opdecide.strategies needs hypothesis, an optional extra of pytest-opdecide that "
        "is not installed. Install it with:",
        "    pip install 'pytest-opdecide[strategies]'",
    ]


def test_fake_context_without_the_extra_names_the_install_command() -> None:
    done = run_without_extras(
        "from fake_runtimes import fake_context\n"
        "try:\n"
        "    fake_context('support_ticket')\n"
        "except ImportError as error:\n"
        "    print(type(error).__name__, '|', error)\n"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("MissingExtra | fake_context() needs faker, an optional extra")
    assert "pip install 'pytest-opdecide[contexts]'" in done.stdout
