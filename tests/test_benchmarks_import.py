"""The benchmarks still import: a module moved inside the package breaks them before they run.

``make test`` does not time anything (speed is measured by ``python -m benchmarks``, against
baselines of the same run); this only proves that every benchmark module can be loaded.
"""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).parents[1] / "benchmarks"


@pytest.mark.parametrize(
    "name", sorted(info.name for info in pkgutil.iter_modules([str(BENCHMARKS)]))
)
def test_every_benchmark_module_imports(name: str) -> None:
    module = importlib.import_module(f"benchmarks.{name}")
    if name.startswith("bench_"):
        assert callable(module.run)
