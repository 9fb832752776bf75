"""Every checked fenced code block of ``README.md`` and ``docs/`` is a test (style rule 13).

One test per block, with the id ``page:line`` (``docs/index.md:42``). The conventions (shared
namespace per page, ``# file: test_name.py`` test modules, ``<!-- no-run -->``...) are described
in ``docs/contributing.md`` and implemented in ``_docblocks.py``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from _docblocks import CodeBlock, DocsExamples, ExampleFailed, ExampleSkipped, collect_blocks

ROOT = Path(__file__).resolve().parent.parent
BLOCKS = [block for block in collect_blocks(ROOT) if block.is_checked]


@pytest.fixture(scope="module")
def docs_examples(tmp_path_factory: pytest.TempPathFactory) -> DocsExamples:
    """The per-process state of the checks: one namespace and working directory per page."""
    return DocsExamples(BLOCKS, make_workdir=tmp_path_factory.mktemp)


@pytest.mark.parametrize("block", BLOCKS, ids=[block.id for block in BLOCKS])
def test_docs_example(
    block: CodeBlock, docs_examples: DocsExamples, request: pytest.FixtureRequest
) -> None:
    def pytester() -> pytest.Pytester:
        # Requested only by test-module blocks: the fixture changes directory and environment.
        fixture: pytest.Pytester = request.getfixturevalue("pytester")
        return fixture

    outcome: ExampleFailed | ExampleSkipped | None = None
    try:
        docs_examples.check(block, pytester)
    except (ExampleFailed, ExampleSkipped) as error:
        outcome = error
    # Reported outside the except clause, so that no "during handling" chain is printed.
    if isinstance(outcome, ExampleSkipped):
        pytest.skip(str(outcome))
    if outcome is not None:
        pytest.fail(str(outcome), pytrace=False)
