"""Running the provider checks against a factory, outside any test suite (``opdecide check``).

The checks are pytest tests, so they run under pytest: in a fresh interpreter (the user's
provider cannot disturb the caller, a crash or a hang is contained), in a temporary directory
holding a generated test module (a ``DecisionProviderTests`` subclass naming the factory) and a
``conftest.py`` that writes each check's outcome to a JSON file. The user's own pytest
configuration is not read; their working directory stays on ``sys.path`` so that
``MODULE:FACTORY`` imports as it would in their project.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

from pytest_opdecide._words import bool_word

__all__ = ["CAPABILITY_KEYS", "CheckReport", "CheckResult", "run_checks"]

Outcome = Literal["passed", "failed", "skipped", "error"]

CAPABILITY_KEYS: Final = (
    "max_levels",
    "max_options",
    "max_questions",
    "needs_backend",
    "property_examples",
    "reports_confidence",
    "request_model",
    "supported_question_types",
    "supports_abort",
)
"""The class attributes ``run_checks(capabilities=...)`` (``--capability``) may set."""

_TEST_MODULE: Final = "test_opdecide_conformance.py"


@dataclass(frozen=True)
class CheckResult:
    """The outcome of one check.

    Attributes:
        name: The check, without its ``test_`` prefix (with its case in brackets).
        outcome: ``passed``, ``failed``, ``skipped`` or ``error`` (the check could not run).
        detail: Why it failed or was skipped (the failure message); empty when it passed.
    """

    name: str
    outcome: Outcome
    detail: str = ""


@dataclass(frozen=True)
class CheckReport:
    """Every check's outcome.

    Attributes:
        target: What was checked (``MODULE:FACTORY``).
        results: One result per check, in the order they ran.
    """

    target: str
    results: tuple[CheckResult, ...]

    @property
    def ok(self) -> bool:
        """Whether checks ran and none failed or errored."""
        return bool(self.results) and all(
            result.outcome in ("passed", "skipped") for result in self.results
        )

    def counts(self) -> dict[str, int]:
        """How many checks ended in each outcome."""
        counts = dict.fromkeys(("passed", "failed", "skipped", "error"), 0)
        for result in self.results:
            counts[result.outcome] += 1
        return counts

    def summary(self) -> str:
        """``34 checks: 31 passed, 1 failed, 2 skipped``."""
        counts = self.counts()
        parts = [f"{counts[name]} {name}" for name in ("passed", "failed", "skipped")]
        if counts["error"]:
            parts.append(f"{counts['error']} error")
        return f"{len(self.results)} checks: " + ", ".join(parts)

    def to_json(self) -> dict[str, Any]:
        """The report as JSON data."""
        return {
            "target": self.target,
            "ok": self.ok,
            "summary": self.counts(),
            "checks": [
                {"name": r.name, "outcome": r.outcome, "detail": r.detail} for r in self.results
            ],
        }


_COLLECTOR: Final = """
import json

_REPORT = {report!r}
_results = {{}}


def _name(nodeid):
    name = nodeid.split("::")[-1]
    return name[len("test_"):] if name.startswith("test_") else name


def _message(report):
    crash = getattr(report.longrepr, "reprcrash", None)
    if crash is not None:
        text = crash.message
        if "ConformanceError: " in text.split(chr(10), 1)[0]:
            text = text.split("ConformanceError: ", 1)[1]
        return text
    if isinstance(report.longrepr, tuple):
        reason = str(report.longrepr[2])
        return reason[len("Skipped: "):] if reason.startswith("Skipped: ") else reason
    return str(report.longrepr)


def pytest_runtest_logreport(report):
    name = _name(report.nodeid)
    entry = _results.setdefault(name, {{"name": name, "outcome": "passed", "detail": ""}})
    if hasattr(report, "wasxfail"):
        entry["outcome"], entry["detail"] = "skipped", "xfail: " + str(report.wasxfail)
    elif report.skipped:
        entry["outcome"], entry["detail"] = "skipped", _message(report)
    elif report.failed:
        outcome = "failed" if report.when == "call" else "error"
        if entry["outcome"] != "failed":
            entry["outcome"] = outcome
            entry["detail"] = _message(report)


def pytest_collectreport(report):
    if report.failed:
        _results["collection"] = {{
            "name": "collection", "outcome": "error", "detail": str(report.longrepr)[-2000:]
        }}


def pytest_sessionfinish(session):
    with open(_REPORT, "w", encoding="utf-8") as file:
        json.dump(list(_results.values()), file)
"""

_MODULE: Final = """
import importlib

from pytest_opdecide.conformance import DecisionProviderTests


def _load(path):
    module_name, _, attribute = path.partition(":")
    found = importlib.import_module(module_name)
    for part in attribute.split("."):
        found = getattr(found, part)
    return found


class TestConformance(DecisionProviderTests):
    provider_factory = staticmethod(_load({target!r}))
    provider_config = {config!r}
{capabilities}
"""


def _capability_value(key: str, text: str) -> object:
    lowered = text.strip().lower()
    if key in ("max_levels", "max_options", "max_questions", "property_examples"):
        if lowered == "none" and key != "property_examples":
            return None
        try:
            return int(text)
        except ValueError:
            raise ValueError(f"capability {key} must be a whole number, got {text!r}") from None
    if key in ("reports_confidence", "supports_abort", "needs_backend"):
        if key == "needs_backend" and lowered in ("none", "auto"):
            return None
        word = bool_word(lowered)
        if word is None:
            raise ValueError(f"capability {key} must be true or false, got {text!r}")
        return word
    if key == "supported_question_types":
        return tuple(part.strip() for part in text.split(",") if part.strip())
    return text


def parse_capabilities(values: Mapping[str, str]) -> dict[str, object]:
    """Typed capability values from text (``"26"``, ``"false"``, ``"choice,boolean"``).

    Raises:
        ValueError: An unknown key or a value that does not parse.
    """
    parsed: dict[str, object] = {}
    for key, text in values.items():
        if key not in CAPABILITY_KEYS:
            raise ValueError(
                f"unknown capability {key!r}; the capabilities: {list(CAPABILITY_KEYS)}"
            )
        parsed[key] = _capability_value(key, text)
    return parsed


def _results(path: Path) -> list[CheckResult]:
    data = json.loads(path.read_text(encoding="utf-8"))
    return [CheckResult(str(e["name"]), e["outcome"], str(e["detail"])) for e in data]


def run_checks(
    target: str,
    config: Mapping[str, str] | None = None,
    *,
    capabilities: Mapping[str, str] | None = None,
    timeout_s: float = 900.0,
    pytest_args: Sequence[str] = (),
) -> CheckReport:
    """Run the :class:`DecisionProviderTests` checks against the factory ``target``.

    Args:
        target: ``MODULE:FACTORY``: a callable taking a ``ProviderFactoryConfig``, importable
            from the current directory.
        config: Config values given to the factory (``api_key``, ``base_url``, ``timeout``
            and the factory's other slots); text is parsed by its ``config_slots``.
        capabilities: Capability values (see :data:`CAPABILITY_KEYS`), as text.
        timeout_s: The longest the whole run may take.
        pytest_args: More pytest arguments (``["-k", "abort"]``).

    Returns:
        One result per check.

    Raises:
        ValueError: An unknown capability or one that does not parse.
    """
    typed = parse_capabilities(capabilities or {})
    lines = [f"    {key} = {value!r}" for key, value in typed.items()]
    with tempfile.TemporaryDirectory(prefix="opdecide-check-") as directory:
        root = Path(directory)
        report = root / "report.json"
        (root / "conftest.py").write_text(_COLLECTOR.format(report=str(report)), encoding="utf-8")
        (root / _TEST_MODULE).write_text(
            _MODULE.format(target=target, config=dict(config or {}), capabilities="\n".join(lines)),
            encoding="utf-8",
        )
        ini = "[pytest]\n"
        if importlib.util.find_spec("pytest_asyncio") is not None:
            # Unset, pytest-asyncio warns at start-up; the checks use no async fixtures.
            ini += "asyncio_default_fixture_loop_scope = function\n"
        (root / "pytest.ini").write_text(ini, encoding="utf-8")
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            [os.getcwd(), *filter(None, [env.get("PYTHONPATH", "")])]
        )
        env.pop("PYTEST_ADDOPTS", None)
        command = [
            sys.executable,
            "-m",
            "pytest",
            str(root / _TEST_MODULE),
            "-c",
            str(root / "pytest.ini"),
            "--rootdir",
            str(root),
            "-p",
            "no:cacheprovider",
            "-q",
            "--no-header",
            *pytest_args,
        ]
        try:
            finished = subprocess.run(
                command,
                cwd=os.getcwd(),
                env=env,
                capture_output=True,
                text=True,
                timeout=timeout_s,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return CheckReport(
                target,
                (CheckResult("run", "error", f"the checks did not finish within {timeout_s:g} s"),),
            )
        if not report.exists():
            output = (finished.stdout + finished.stderr).strip()[-2000:]
            return CheckReport(
                target,
                (
                    CheckResult(
                        "run", "error", f"pytest exited with {finished.returncode}: {output}"
                    ),
                ),
            )
        return CheckReport(target, tuple(_results(report)))
