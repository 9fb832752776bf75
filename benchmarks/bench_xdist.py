"""Scale-out under pytest-xdist: ``-n 2`` against ``-n 1`` on 2,000 scripted tests (issue 22).

A generated project of 2,000 tests in 20 modules, each making one scripted decision through
the ``runtime`` fixture the way the docs write them (``@pytest.mark.opdecide(script=[pick(...)])``
and ``decision.make``), is run with ``pytest -n 1`` and ``pytest -n 2``, alternately, as fresh
subprocesses. The figure is the wall time on two workers over the wall time on one: 0.5 would be
perfect scaling, 1 no gain. Target: at most 0.75 (a speed-up of at least 1.33 on two workers; the
controller, the workers' start-up and collection on each worker are not parallel).

Wall time is the only figure that shows scale-out, so this one is measured on a shared machine
as it is: the note gives the load average (``/proc/loadavg``) before and after, and the CPU time
of both runs (two workers doing the same work as one cost about the same CPU: much more would
mean work repeated on every worker, such as a session-wide file or an index rebuilt in each).
"""

from __future__ import annotations

import os
import statistics
import tempfile
from pathlib import Path

from benchmarks import Measurement
from benchmarks.bench_plugin import HEADER, WITH_FIXTURE, _run

TESTS = 2000
MODULES = 20
ROUNDS = 3
TARGET = 0.75

INI = """[pytest]
asyncio_default_fixture_loop_scope = function
"""


def _load() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "unknown"


def _write_project(folder: Path) -> None:
    folder.mkdir()
    (folder / "pytest.ini").write_text(INI)
    per_module = TESTS // MODULES
    for module in range(MODULES):
        body = "".join(WITH_FIXTURE.format(n=module * per_module + i) for i in range(per_module))
        (folder / f"test_routes_{module}.py").write_text(HEADER + body)


def run() -> list[Measurement]:
    load_before = _load()
    with tempfile.TemporaryDirectory(prefix="opdecide-bench-xdist-") as tmp:
        project = Path(tmp) / "project"
        _write_project(project)
        sides = {"1": ["-n", "1"], "2": ["-n", "2"]}
        for arguments in sides.values():  # warm-up: bytecode caches, file system caches
            _run(project, arguments, (0,))
        samples: dict[str, list[tuple[float, float]]] = {name: [] for name in sides}
        for _ in range(ROUNDS):
            for name, arguments in sides.items():
                samples[name].append(_run(project, arguments, (0,)))
    cpu = {name: statistics.median(s[0] for s in runs) for name, runs in samples.items()}
    wall = {name: statistics.median(s[1] for s in runs) for name, runs in samples.items()}
    return [
        Measurement(
            f"{TESTS:,} scripted tests, wall time -n 2 / -n 1 (0.5: perfect scaling)",
            wall["2"] / wall["1"],
            "x",
            TARGET,
            note=(
                f"wall {wall['2']:.2f} s vs {wall['1']:.2f} s (speed-up "
                f"{wall['1'] / wall['2']:.2f}x); CPU {cpu['2']:.2f} s vs {cpu['1']:.2f} s; "
                f"{os.cpu_count()} cores; load average {load_before} before, {_load()} after"
            ),
        )
    ]
