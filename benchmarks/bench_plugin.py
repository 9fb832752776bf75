"""The pytest plugin's cost (issue 5).

1. A generated suite of 1,000 tests, each making one scripted decision through the ``runtime``
   fixture, against the same 1,000 tests building a ``ScriptedRuntime`` by hand with the plugin
   disabled (``-p no:opdecide``). Target: at most 1.5 times the baseline's time.
2. Trivial tests (an assertion each, no fixture, no marker): what the plugin costs each test of
   a suite, most of which never use it. Target: the plugin's per-test cost at most 1.03 times
   the baseline's. The per-test cost is the difference between two suites' costs (start-up,
   paid once, cancels out), with the plugin on and with ``-p no:opdecide``. Counted in
   instructions where valgrind is installed (``callgrind``, suites of 200 and 400 tests, hash
   seed fixed): the same count on every run whatever the machine's load, where a difference of
   CPU times between suites cannot tell 3% from noise (seen here: 0.88 to 1.26 for the same
   code). The CPU-time figures (suites of 2,000 and 4,000 tests) are in the note, with the
   whole-run ratio of the 2,000-test suite (it includes the plugin's start-up, row 3); they
   are the figure itself on a machine without valgrind.
3. pytest's start-up: ``pytest --co -q`` on an empty suite, with and without
   ``-p no:opdecide``. Target: the plugin adds at most 150 ms.

Every figure is the median of several runs, each a fresh ``python -m pytest -q -p
no:cacheprovider`` subprocess in a temporary directory; the two sides of a comparison run
alternately, so that a change in the machine's load hits both. Times are the child's CPU time
(user + system): on a shared machine wall-clock time mostly measures the other processes. The
wall-clock medians are shown in the note. Bytecode caches are on, as in a user's runs.
"""

from __future__ import annotations

import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from benchmarks import Measurement

TESTS = 1000
MODULES = 10
SUITE_ROUNDS = 3
STARTUP_ROUNDS = 9

INI = """[pytest]
asyncio_default_fixture_loop_scope = function
"""

HEADER = """import pytest
from fake_runtimes import ScriptedRuntime, pick
from pytest_opdecide import decision



def refund(amount: int) -> str:
    return "REFUND"


OPTIONS = {"refund": refund, "close": "CLOSED", "escalate": "ESCALATED"}
"""

WITH_FIXTURE = """

@pytest.mark.opdecide(script=[pick("refund", amount={n})])
def test_decision_{n}(runtime):
    assert decision.make("Route ticket {n}.", OPTIONS) == "REFUND"
"""

BY_HAND = """

def test_decision_{n}():
    runtime = ScriptedRuntime(pick("refund", amount={n}))
    assert decision.make("Route ticket {n}.", OPTIONS, runtime=runtime) == "REFUND"
    runtime.assert_complete()
"""
TRIVIAL_TESTS = 2000
TRIVIAL = """

def test_trivial_{n}():
    assert {n} + 1 > {n}
"""

# The varying amount keeps every test's reply distinct (a strict pick is checked against the
# option's parameters, so the option takes it).


# As users run pytest: with bytecode caches (the warm-up run writes them).
_ENV = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}


def _write_suite(
    folder: Path,
    template: str,
    tests: int = TESTS,
    header: str = HEADER,
    modules: int = MODULES,
) -> None:
    folder.mkdir()
    (folder / "pytest.ini").write_text(INI)
    per_module = tests // modules
    for module in range(modules):
        body = "".join(template.format(n=module * per_module + i) for i in range(per_module))
        (folder / f"test_suite_{module}.py").write_text(header + body)


def _run(folder: Path, arguments: Sequence[str], expect: Sequence[int]) -> tuple[float, float]:
    """One pytest subprocess: (CPU seconds of the child, wall seconds)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    completed = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *arguments],
        cwd=folder,
        capture_output=True,
        text=True,
        env=_ENV,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if completed.returncode not in expect:
        raise RuntimeError(
            f"pytest {' '.join(arguments)} in {folder} exited with {completed.returncode}:\n"
            f"{completed.stdout[-3000:]}\n{completed.stderr[-3000:]}"
        )
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall


def _alternate(
    rounds: int, sides: Sequence[tuple[Path, Sequence[str], Sequence[int]]]
) -> list[tuple[float, float]]:
    """Run each side ``rounds`` times, alternating; the medians (CPU, wall) per side."""
    for folder, arguments, expect in sides:  # warm-up: bytecode caches, file system caches
        _run(folder, arguments, expect)
    samples: list[list[tuple[float, float]]] = [[] for _ in sides]
    for _ in range(rounds):
        for index, (folder, arguments, expect) in enumerate(sides):
            samples[index].append(_run(folder, arguments, expect))
    return [
        (statistics.median(s[0] for s in side), statistics.median(s[1] for s in side))
        for side in samples
    ]


INSTRUCTION_SUITES = (200, 400)


def _instructions(folder: Path, arguments: Sequence[str]) -> subprocess.Popen[str]:
    """A pytest subprocess under callgrind (its count of instructions is on stderr)."""
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *arguments]
    subprocess.run(command, cwd=folder, capture_output=True, env=_ENV, check=False)  # caches
    return subprocess.Popen(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *command],
        cwd=folder,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**_ENV, "PYTHONHASHSEED": "0"},
    )


def _counted(process: subprocess.Popen[str]) -> int:
    _, stderr = process.communicate()
    found = re.search(r"Collected : (\d+)", stderr)
    if process.returncode != 0 or found is None:
        raise RuntimeError(f"callgrind run failed ({process.returncode}):\n{stderr[-2000:]}")
    return int(found.group(1))


def _per_test_instructions(root: Path) -> tuple[float, float] | None:
    """Instructions per trivial test, plugin on and off (see the module's docstring); ``None``
    without valgrind. Two runs at a time: one per core."""
    if shutil.which("valgrind") is None:
        return None
    suites = []
    for tests in INSTRUCTION_SUITES:
        folder = root / f"counted_{tests}"
        _write_suite(folder, TRIVIAL, tests, header="", modules=4)
        suites.append(folder)
    counts: dict[tuple[int, bool], int] = {}
    for index, folder in enumerate(suites):
        on, off = _instructions(folder, []), _instructions(folder, ["-p", "no:opdecide"])
        counts[index, True], counts[index, False] = _counted(on), _counted(off)
    span = INSTRUCTION_SUITES[1] - INSTRUCTION_SUITES[0]
    return (
        (counts[1, True] - counts[0, True]) / span,
        (counts[1, False] - counts[0, False]) / span,
    )


def run() -> list[Measurement]:
    with tempfile.TemporaryDirectory(prefix="opdecide-bench-") as tmp:
        root = Path(tmp)
        fixture_suite, hand_suite, empty = root / "fixture", root / "by_hand", root / "empty"
        _write_suite(fixture_suite, WITH_FIXTURE)
        _write_suite(hand_suite, BY_HAND)
        empty.mkdir()
        (empty / "pytest.ini").write_text(INI)
        trivial, doubled = root / "trivial", root / "trivial_doubled"
        _write_suite(trivial, TRIVIAL, TRIVIAL_TESTS, header="")
        _write_suite(doubled, TRIVIAL, 2 * TRIVIAL_TESTS, header="", modules=2 * MODULES)

        passed = (0,)
        (plugin_cpu, plugin_wall), (hand_cpu, hand_wall) = _alternate(
            SUITE_ROUNDS,
            [(fixture_suite, [], passed), (hand_suite, ["-p", "no:opdecide"], passed)],
        )
        off = ["-p", "no:opdecide"]
        (on_cpu, on_wall), (off_cpu, off_wall), (on2_cpu, _), (off2_cpu, _) = _alternate(
            SUITE_ROUNDS + 2,
            [(suite, arguments, passed) for suite in (trivial, doubled) for arguments in ([], off)],
        )
        on_per_test = (on2_cpu - on_cpu) / TRIVIAL_TESTS
        off_per_test = (off2_cpu - off_cpu) / TRIVIAL_TESTS
        counted = _per_test_instructions(root)
        no_tests = (5,)  # pytest's exit status when nothing was collected
        (with_cpu, with_wall), (without_cpu, without_wall) = _alternate(
            STARTUP_ROUNDS,
            [(empty, ["--co"], no_tests), (empty, ["--co", "-p", "no:opdecide"], no_tests)],
        )

    ratio = plugin_cpu / hand_cpu
    return [
        Measurement(
            name=f"{TESTS} scripted tests through the runtime fixture / by hand, no plugin",
            value=ratio,
            unit="x",
            target=1.5,
            note=(
                f"CPU {plugin_cpu:.2f} s vs baseline {hand_cpu:.2f} s; wall "
                f"{plugin_wall:.2f} s vs {hand_wall:.2f} s ({plugin_wall / hand_wall:.2f}x)"
            ),
        ),
        Measurement(
            name=(
                "per-test cost of trivial tests, plugin on / -p no:opdecide "
                + ("(instructions)" if counted else "(CPU)")
            ),
            value=counted[0] / counted[1] if counted else on_per_test / off_per_test,
            unit="x",
            target=1.03,
            baseline=1.0,
            note=(
                (
                    f"{counted[0]:,.0f} vs baseline {counted[1]:,.0f} instructions per test "
                    "(400 tests' count less 200's, callgrind); "
                    if counted
                    else ""
                )
                + f"CPU {on_per_test * 1e6:.0f} us vs {off_per_test * 1e6:.0f} us per test "
                f"(4,000 tests' CPU time less 2,000's: {on_per_test / off_per_test:.2f}x); "
                f"whole run of {TRIVIAL_TESTS:,}: CPU {on_cpu:.2f} s vs {off_cpu:.2f} s "
                f"({on_cpu / off_cpu:.3f}x), wall {on_wall:.2f} s vs {off_wall:.2f} s "
                "(start-up included)"
            ),
        ),
        Measurement(
            name="pytest start-up added by the plugin (pytest --co, empty suite)",
            value=(with_cpu - without_cpu) * 1000,
            unit="ms",
            target=150,
            baseline=without_cpu * 1000,
            note=(
                f"CPU {with_cpu * 1000:.0f} ms vs {without_cpu * 1000:.0f} ms without the "
                f"plugin; wall {with_wall * 1000:.0f} ms vs {without_wall * 1000:.0f} ms "
                f"({(with_wall - without_wall) * 1000:+.0f} ms)"
            ),
        ),
    ]
