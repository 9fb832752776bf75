"""Scale-out under pytest-xdist: ``-n 2`` against ``-n 1`` on 2,000 scripted tests (issue 22).

A generated project of 2,000 tests in 20 modules, each making one scripted decision through
the ``runtime`` fixture the way the docs write them (``@pytest.mark.opdecide(script=[pick(...)])``
and ``decision.make``), is run with ``pytest -n 1`` and ``pytest -n 2``, alternately, as fresh
subprocesses. The figure is the wall time on two workers over the wall time on one: 0.5 would be
perfect scaling, 1 no gain.

The anchor, measured in the same run and the same way: the same 2,000 decisions written by hand
(``ScriptedRuntime`` and ``runtime=``) with the plugin disabled (``-p no:opdecide``): how far
pytest-xdist itself scales these tests on this machine. Its controller, each worker's start-up
and each worker's import and collection of all 2,000 tests are not parallel, so on two cores it
stays far above 0.5 (about 0.87 to 0.96 here). The figure is the plugin's scaling over the
anchor's; target: at most 1.05. A plugin that serialised its workers (a shared lock, a
session-wide file every test writes) would scale worse than the anchor. The note also gives what
the plugin adds to the wall time on each side (``ours - anchor``): its part that every worker
repeats (its start-up, its work at collection) does not split, the rest does.

Wall time is the only figure that shows scale-out, so this one is measured on the machine as it
is: the note gives the load average (``/proc/loadavg``) before and after, and the CPU time of
the runs (two workers doing the same work as one cost about the same CPU, plus one more
collection: much more would mean work repeated on every worker).
"""

from __future__ import annotations

import os
import statistics
import tempfile
from pathlib import Path

from benchmarks import Measurement
from benchmarks.bench_plugin import BY_HAND, WITH_FIXTURE, _run, _write_suite

TESTS = 2000
MODULES = 20
ROUNDS = 5
TARGET = 1.05


def _load() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "unknown"


def run() -> list[Measurement]:
    load_before = _load()
    with tempfile.TemporaryDirectory(prefix="opdecide-bench-xdist-") as tmp:
        ours, anchor = Path(tmp) / "fixture", Path(tmp) / "by_hand"
        _write_suite(ours, WITH_FIXTURE, TESTS, modules=MODULES)
        _write_suite(anchor, BY_HAND, TESTS, modules=MODULES)
        sides = {
            ("ours", "1"): (ours, ["-n", "1"]),
            ("ours", "2"): (ours, ["-n", "2"]),
            ("anchor", "1"): (anchor, ["-p", "no:opdecide", "-n", "1"]),
            ("anchor", "2"): (anchor, ["-p", "no:opdecide", "-n", "2"]),
        }
        for folder, arguments in sides.values():  # warm-up: bytecode caches, file system caches
            _run(folder, arguments, (0,))
        samples: dict[tuple[str, str], list[tuple[float, float]]] = {side: [] for side in sides}
        for _ in range(ROUNDS):  # interleaved, so that a change of load hits every side
            for side, (folder, arguments) in sides.items():
                samples[side].append(_run(folder, arguments, (0,)))
    cpu = {side: statistics.median(s[0] for s in runs) for side, runs in samples.items()}
    wall = {side: statistics.median(s[1] for s in runs) for side, runs in samples.items()}
    scaling = {who: wall[(who, "2")] / wall[(who, "1")] for who in ("ours", "anchor")}
    added = {n: wall[("ours", n)] - wall[("anchor", n)] for n in ("1", "2")}
    return [
        Measurement(
            f"{TESTS:,} scripted tests, wall -n 2 / -n 1, over the same ratio without the plugin",
            scaling["ours"] / scaling["anchor"],
            "x",
            TARGET,
            baseline=1.0,
            note=(
                f"with the plugin {scaling['ours']:.2f} (wall {wall[('ours', '2')]:.2f} s vs "
                f"{wall[('ours', '1')]:.2f} s, speed-up {1 / scaling['ours']:.2f}x; CPU "
                f"{cpu[('ours', '2')]:.2f} s vs {cpu[('ours', '1')]:.2f} s); by hand without it "
                f"{scaling['anchor']:.2f} (wall {wall[('anchor', '2')]:.2f} s vs "
                f"{wall[('anchor', '1')]:.2f} s, speed-up {1 / scaling['anchor']:.2f}x); the "
                f"plugin adds {added['2']:+.2f} s on -n 2, {added['1']:+.2f} s on -n 1; "
                f"{os.cpu_count()} cores; load average {load_before} before, {_load()} after"
            ),
        )
    ]
