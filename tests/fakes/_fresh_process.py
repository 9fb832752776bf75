"""Run code in a fresh Python process, to prove that seeded output is the same everywhere."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

TESTS = Path(__file__).resolve().parent.parent
ROOT = TESTS.parent


def json_from_fresh_process(code: str, *, hash_seed: str) -> Any:
    """Run ``code`` in a new interpreter and parse what it prints as JSON.

    ``hash_seed`` sets ``PYTHONHASHSEED``, so that string hashing (and set order) differs from
    this process: output that depended on ``hash()`` would differ too. ``tests/`` is importable.
    """
    env = {
        **os.environ,
        "PYTHONHASHSEED": hash_seed,
        "PYTHONPATH": os.pathsep.join([str(ROOT), str(TESTS)]),
    }
    done = subprocess.run(
        [sys.executable, "-W", "error", "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)
