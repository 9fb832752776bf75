"""Running the provider checks against factories, outside any test suite (``opdecide check``).

The checks are pytest tests, so they run under pytest, in a fresh interpreter, in a temporary
directory holding a generated test module (one ``DecisionProviderTests`` subclass per factory)
and a ``conftest.py`` that writes an event per check as it starts and as each of its phases
ends, flushed at once. The user's own pytest configuration is not read; their working directory
stays on ``sys.path`` so that ``MODULE:FACTORY`` imports as it would in their project.

No provider can take the report down with it. A check passes only when its call and its
teardown passed. The run is watched: a check that runs longer than ``check_timeout_s`` is
stopped, and one during which the interpreter dies (``os._exit``, a crash of native code, an
internal error of pytest) is reported as an error saying how it ended; the run then goes on
with the checks not yet run, in a new interpreter.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal

from pytest_opdecide._words import bool_word
from pytest_opdecide.conformance._provider_tests import CAPABILITY_ATTRIBUTES

__all__ = ["CAPABILITY_KEYS", "CheckReport", "CheckResult", "run_checks", "run_checks_each"]

Outcome = Literal["passed", "failed", "skipped", "error"]

CAPABILITY_KEYS: Final = CAPABILITY_ATTRIBUTES
"""The class attributes ``run_checks(capabilities=...)`` (``--capability``) may set: every
capability and setting of :class:`~pytest_opdecide.conformance.DecisionProviderTests`."""

_TEST_MODULE: Final = "test_opdecide_conformance.py"
_POLL_S: Final = 0.05
_MAX_OUTPUT: Final = 2000


@dataclass(frozen=True)
class CheckResult:
    """The outcome of one check.

    Attributes:
        name: The check, without its ``test_`` prefix (with its case in brackets).
        outcome: ``passed``, ``failed``, ``skipped`` or ``error`` (the check could not run, or
            crashed, or its teardown failed).
        detail: Why it failed, errored or was skipped (the failure message); empty when it
            passed.
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
import os

_EVENTS = open({events!r}, "a", encoding="utf-8")


def _write(event):
    _EVENTS.write(json.dumps(event) + chr(10))
    _EVENTS.flush()


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


def pytest_runtest_logstart(nodeid, location):
    _write({{"event": "start", "nodeid": nodeid}})


def pytest_runtest_logreport(report):
    _write({{
        "event": "report",
        "nodeid": report.nodeid,
        "when": report.when,
        "outcome": report.outcome,
        "xfail": str(report.wasxfail) if hasattr(report, "wasxfail") else None,
        "detail": "" if report.passed else _message(report),
    }})


def pytest_runtest_logfinish(nodeid, location):
    _write({{"event": "finish", "nodeid": nodeid}})


def pytest_collectreport(report):
    if report.failed:
        _write({{"event": "collect_error", "detail": str(report.longrepr)[-2000:]}})


def pytest_internalerror(excrepr, excinfo):
    _write({{"event": "internal_error", "detail": str(excrepr)[-2000:]}})


def pytest_sessionfinish(session, exitstatus):
    _write({{"event": "session_finish", "status": int(exitstatus)}})
"""

_MODULE_HEAD: Final = """
import importlib

from pytest_opdecide.conformance import DecisionProviderTests


def _load(path):
    module_name, _, attribute = path.partition(":")
    found = importlib.import_module(module_name)
    for part in attribute.split("."):
        found = getattr(found, part)
    return found
"""

_CLASS: Final = """

class {name}(DecisionProviderTests):
    provider_factory = staticmethod(_load({target!r}))
    provider_config = {config!r}
{capabilities}
"""


def _capability_value(key: str, text: str) -> object:
    lowered = text.strip().lower()
    if key in ("max_levels", "max_options", "max_questions", "probability_decimals"):
        if lowered == "none":
            return None
        try:
            return int(text)
        except ValueError:
            raise ValueError(f"capability {key} must be a whole number, got {text!r}") from None
    if key == "property_examples":
        try:
            return int(text)
        except ValueError:
            raise ValueError(f"capability {key} must be a whole number, got {text!r}") from None
    if key in ("probability_tolerance", "call_timeout_s", "abort_grace_s"):
        try:
            number = float(text)
        except ValueError:
            raise ValueError(f"capability {key} must be a number, got {text!r}") from None
        if not number >= 0 or number == float("inf"):
            raise ValueError(f"capability {key} must be a finite number >= 0, got {text!r}")
        return number
    if key in ("reports_confidence", "supports_abort", "needs_backend"):
        if key == "needs_backend" and lowered in ("none", "auto"):
            return None
        word = bool_word(lowered)
        if word is None:
            raise ValueError(f"capability {key} must be true or false, got {text!r}")
        return word
    if key == "supported_question_types":
        return tuple(part.strip() for part in text.split(",") if part.strip())
    if key == "sent_models":
        mapping: dict[str, str] = {}
        for pair in filter(None, (part.strip() for part in text.split(","))):
            asked, arrow, sent = pair.partition("->")
            if not arrow or not sent.strip():
                raise ValueError(
                    f"capability sent_models takes REQUESTED->SENT pairs separated by commas "
                    f"(sent_models=fast->gpt-4o-mini), got {text!r}"
                )
            mapping[asked.strip()] = sent.strip()
        return mapping
    return text


def parse_capabilities(values: Mapping[str, str]) -> dict[str, object]:
    """Typed capability values from text (``"26"``, ``"false"``, ``"choice,boolean"``,
    ``"0.012"``, ``"fast->gpt-4o-mini"``).

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


# ---------------------------------------------------------------- reading the events


@dataclass
class _Check:
    """What the events say about one check."""

    nodeid: str
    reports: dict[str, dict[str, Any]] = field(default_factory=dict)
    finished: bool = False
    crash: str | None = None

    def result(self) -> CheckResult:
        name = self.nodeid.split("::")[-1]
        name = name[len("test_") :] if name.startswith("test_") else name
        if self.crash is not None:
            return CheckResult(name, "error", self.crash)
        setup = self.reports.get("setup", {})
        call = self.reports.get("call", {})
        teardown = self.reports.get("teardown", {})
        for phase in (setup, call, teardown):
            if phase.get("xfail") is not None and phase.get("outcome") == "skipped":
                return CheckResult(name, "skipped", "xfail: " + str(phase["xfail"]))
        if setup.get("outcome") == "skipped":
            return CheckResult(name, "skipped", setup["detail"])
        if setup.get("outcome") == "failed":
            return CheckResult(name, "error", setup["detail"])
        if call.get("outcome") == "failed":
            return CheckResult(name, "failed", call["detail"])
        if call.get("outcome") == "skipped":
            return CheckResult(name, "skipped", call["detail"])
        if teardown.get("outcome") == "failed":
            return CheckResult(name, "error", "at teardown: " + teardown["detail"])
        if call.get("outcome") == "passed" and self.finished:
            return CheckResult(name, "passed")
        return CheckResult(name, "error", "the check did not finish")


@dataclass
class _Events:
    """The events of the runs so far."""

    checks: dict[str, _Check] = field(default_factory=dict)
    running: str | None = None
    running_since: float = 0.0
    collect_errors: list[str] = field(default_factory=list)
    internal_errors: list[str] = field(default_factory=list)
    session_finished: bool = False
    _offset: int = 0

    def read(self, path: Path) -> None:
        """Read the events written since the last read (complete lines only)."""
        try:
            with path.open("rb") as file:
                file.seek(self._offset)
                data = file.read()
        except FileNotFoundError:
            return
        end = data.rfind(b"\n") + 1
        self._offset += end
        for line in data[:end].splitlines():
            try:
                event = json.loads(line)
            except ValueError:
                continue
            self._apply(event)

    def _apply(self, event: dict[str, Any]) -> None:
        kind = event.get("event")
        if kind == "start":
            nodeid = str(event["nodeid"])
            self.checks[nodeid] = _Check(nodeid)
            self.running, self.running_since = nodeid, time.monotonic()
        elif kind == "report":
            check = self.checks.setdefault(str(event["nodeid"]), _Check(str(event["nodeid"])))
            check.reports[str(event["when"])] = event
        elif kind == "finish":
            nodeid = str(event["nodeid"])
            self.checks.setdefault(nodeid, _Check(nodeid)).finished = True
            if self.running == nodeid:
                self.running = None
        elif kind == "collect_error":
            self.collect_errors.append(str(event["detail"]))
        elif kind == "internal_error":
            self.internal_errors.append(str(event["detail"]))
        elif kind == "session_finish":
            self.session_finished = True


def _how_it_ended(returncode: int, output: str) -> str:
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        what = f"the interpreter was killed by {name}"
    else:
        what = f"the interpreter exited with status {returncode}"
    tail = output.strip()[-_MAX_OUTPUT:]
    if re.fullmatch(r"[.sFExX\s\[\]%0-9]*", tail):
        tail = ""  # only pytest's progress marks
    cause = "os._exit, a crash in native code, or an internal error of pytest"
    return f"{what} during this check ({cause}){': ' + tail if tail else ''}"


# ---------------------------------------------------------------- running


def _write_project(
    root: Path,
    targets: Sequence[str],
    config: Mapping[str, str],
    capabilities: Mapping[str, object],
    events: Path,
) -> dict[str, str]:
    """Write the test module, conftest and ini; class name -> target."""
    (root / "conftest.py").write_text(_COLLECTOR.format(events=str(events)), encoding="utf-8")
    lines = [f"    {key} = {value!r}" for key, value in capabilities.items()]
    # Numbers of one width, so that no class name is a part of another's (`-k TestConformance1`
    # would select 1 and 10 to 19).
    width = len(str(max(len(targets) - 1, 0)))
    classes = {f"TestConformance{index:0{width}d}": target for index, target in enumerate(targets)}
    module = _MODULE_HEAD + "".join(
        _CLASS.format(name=name, target=target, config=dict(config), capabilities="\n".join(lines))
        for name, target in classes.items()
    )
    (root / _TEST_MODULE).write_text(module, encoding="utf-8")
    ini = "[pytest]\n"
    if importlib.util.find_spec("pytest_asyncio") is not None:
        # Unset, pytest-asyncio warns at start-up; the checks use no async fixtures.
        ini += "asyncio_default_fixture_loop_scope = function\n"
    # An exception nobody could catch (in a finalizer, in a thread) fails the check it
    # happened in, instead of scrolling by as a warning.
    ini += (
        "filterwarnings =\n"
        "    error::pytest.PytestUnraisableExceptionWarning\n"
        "    error::pytest.PytestUnhandledThreadExceptionWarning\n"
    )
    (root / "pytest.ini").write_text(ini, encoding="utf-8")
    return classes


def _kill(process: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, OSError):
        process.kill()
    process.wait()


def run_checks_each(
    targets: Sequence[str],
    config: Mapping[str, str] | None = None,
    *,
    capabilities: Mapping[str, str] | None = None,
    timeout_s: float = 900.0,
    check_timeout_s: float = 300.0,
    pytest_args: Sequence[str] = (),
) -> tuple[CheckReport, ...]:
    """Run the :class:`DecisionProviderTests` checks against each factory of ``targets``, in
    one fresh interpreter (a new one after a check that took the interpreter down).

    Args:
        targets: ``MODULE:FACTORY`` paths, each a callable taking a ``ProviderFactoryConfig``,
            importable from the current directory.
        config: Config values given to every factory (see :func:`run_checks`).
        capabilities: Capability values (see :data:`CAPABILITY_KEYS`), as text.
        timeout_s: The longest the whole run may take.
        check_timeout_s: The longest one check may take before it is stopped.
        pytest_args: More pytest arguments (``["-k", "abort"]``).

    Returns:
        One report per target, in order.

    Raises:
        ValueError: An unknown capability or one that does not parse.
    """
    typed = parse_capabilities(capabilities or {})
    events = _Events()
    deadline = time.monotonic() + timeout_s
    run_error = ""
    with tempfile.TemporaryDirectory(prefix="opdecide-check-") as directory:
        root = Path(directory)
        event_file = root / "events.jsonl"
        classes = _write_project(root, targets, config or {}, typed, event_file)
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            [os.getcwd(), *filter(None, [env.get("PYTHONPATH", "")])]
        )
        env.pop("PYTEST_ADDOPTS", None)
        base = [
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
        while True:
            done = list(events.checks)
            deselect = [arg for nodeid in done for arg in ("--deselect", nodeid)]
            output_file = root / f"output-{len(done)}.txt"
            with output_file.open("wb") as output:
                process = subprocess.Popen(
                    [*base, *deselect],
                    cwd=os.getcwd(),
                    env=env,
                    stdout=output,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
                stopped = ""
                while process.poll() is None:
                    time.sleep(_POLL_S)
                    events.read(event_file)
                    now = time.monotonic()
                    if events.running and now - events.running_since > check_timeout_s:
                        stopped = (
                            f"the check did not finish within {check_timeout_s:g} s and was "
                            "stopped (a hang the check's own time limits could not end)"
                        )
                    elif now > deadline:
                        stopped = f"the checks did not finish within {timeout_s:g} s: stopped"
                    if stopped:
                        _kill(process)
                        break
            events.read(event_file)
            text = output_file.read_text(encoding="utf-8", errors="replace")
            crashed = events.running
            if crashed is not None:
                # An error, not a failure: the check did not get to its verdict.
                events.checks[crashed].crash = stopped or _how_it_ended(process.returncode, text)
                events.running = None
            if time.monotonic() > deadline:
                run_error = f"the checks did not finish within {timeout_s:g} s"
                break
            if events.session_finished and crashed is None:
                break
            if crashed is None:
                if not events.checks:
                    tail = text.strip()[-_MAX_OUTPUT:]
                    run_error = f"pytest exited with {process.returncode}: {tail}"
                break
            events.session_finished = False
    return tuple(_report(target, name, events, run_error) for name, target in classes.items())


def _report(target: str, class_name: str, events: _Events, run_error: str) -> CheckReport:
    results = [
        check.result()
        for nodeid, check in events.checks.items()
        if nodeid.split("::")[-2:-1] == [class_name]
    ]
    if events.collect_errors and not results:
        results = [CheckResult("collection", "error", events.collect_errors[0])]
    if events.internal_errors:
        results.append(CheckResult("run", "error", events.internal_errors[0]))
    if run_error and not results:
        results = [CheckResult("run", "error", run_error)]
    elif run_error:
        results.append(CheckResult("run", "error", run_error))
    return CheckReport(target, tuple(results))


def run_checks(
    target: str,
    config: Mapping[str, str] | None = None,
    *,
    capabilities: Mapping[str, str] | None = None,
    timeout_s: float = 900.0,
    check_timeout_s: float = 300.0,
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
        check_timeout_s: The longest one check may take before it is stopped (an error).
        pytest_args: More pytest arguments (``["-k", "abort"]``).

    Returns:
        One result per check.

    Raises:
        ValueError: An unknown capability or one that does not parse.
    """
    (report,) = run_checks_each(
        [target],
        config,
        capabilities=capabilities,
        timeout_s=timeout_s,
        check_timeout_s=check_timeout_s,
        pytest_args=pytest_args,
    )
    return report
