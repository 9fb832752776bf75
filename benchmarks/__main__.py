"""Run every benchmark module and print the figures: ``python -m benchmarks [NAME ...]``."""

from __future__ import annotations

import importlib
import pkgutil
import sys
from pathlib import Path

from benchmarks import Measurement


def main(argv: list[str]) -> int:
    wanted = set(argv)
    here = Path(__file__).parent
    results: list[Measurement] = []
    for info in sorted(pkgutil.iter_modules([str(here)]), key=lambda m: m.name):
        if not info.name.startswith("bench_"):
            continue
        if wanted and info.name not in wanted and info.name.removeprefix("bench_") not in wanted:
            continue
        module = importlib.import_module(f"benchmarks.{info.name}")
        print(f"== {info.name}", flush=True)
        for m in module.run():
            results.append(m)
            base = "" if m.baseline is None else f"  baseline {m.baseline:.6g} {m.unit}"
            flag = "ok" if m.ok else "MISSED"
            print(
                f"  {flag:6} {m.name}: {m.value:.6g} {m.unit} (target <= {m.target:g}){base}"
                f"{'  ' + m.note if m.note else ''}",
                flush=True,
            )
    missed = [m for m in results if not m.ok]
    print(f"{len(results) - len(missed)} met, {len(missed)} missed")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
