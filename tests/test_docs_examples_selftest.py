"""Tests of the docs-example harness (``_docblocks.py``) on small synthetic pages."""

from __future__ import annotations

import itertools
import textwrap
from pathlib import Path

import pytest
from _docblocks import (
    PYTEST_ARGS,
    Check,
    CodeBlock,
    DocsExamples,
    ExampleFailed,
    ExampleSkipped,
    collect_blocks,
    markdown_pages,
    parse_blocks,
)

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

# The synthetic examples use neither the project's plugin (keep these tests independent of its
# state) nor hypothesis's and faker's (each costs a second or more in every new process).
SELFTEST_PYTEST_ARGS = (
    *PYTEST_ARGS,
    *("-p", "no:opdecide", "-p", "no:hypothesispytest", "-p", "no:faker"),
)


def write_page(root: Path, page: str, text: str) -> Path:
    path = root / page
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def page_blocks(root: Path, text: str, page: str = "docs/page.md") -> list[CodeBlock]:
    """The blocks of a synthetic page, parsed as the real collector does."""
    path = write_page(root, page, text)
    return parse_blocks(
        path.read_text(encoding="utf-8"),
        path=path,
        page=page,
        rendered_by_mkdocs=page.startswith("docs/"),
    )


def make_checker(root: Path, blocks: list[CodeBlock]) -> DocsExamples:
    counter = itertools.count()

    def make_workdir(name: str) -> Path:
        workdir = root / "work" / f"{name}-{next(counter)}"
        workdir.mkdir(parents=True)
        return workdir

    return DocsExamples(blocks, make_workdir=make_workdir, pytest_args=SELFTEST_PYTEST_ARGS)


def no_pytester() -> pytest.Pytester:
    raise AssertionError("only a test-module block asks for pytester")


def checked(blocks: list[CodeBlock]) -> list[CodeBlock]:
    return [block for block in blocks if block.is_checked]


# --- Parsing ------------------------------------------------------------------------------------


def test_parse_finds_every_block_with_its_language_line_and_code(tmp_path: Path) -> None:
    blocks = page_blocks(
        tmp_path,
        """\
        # Title

        ```python
        x = 1
        ```

        ```bash
        make test
        ```

        ~~~toml
        a = 1
        ~~~

        ```YAML
        a: 1
        ```

        ```
        plain
        ```
        """,
    )

    assert [(block.language, block.line, block.check) for block in blocks] == [
        ("python", 3, Check.RUN),
        ("bash", 7, Check.NONE),
        ("toml", 11, Check.TOML),
        ("yaml", 15, Check.YAML),
        ("", 19, Check.NONE),
    ]
    assert blocks[0].code == "x = 1\n"
    assert blocks[0].id == "docs/page.md:3"
    assert [block.id for block in checked(blocks)] == [
        "docs/page.md:3",
        "docs/page.md:11",
        "docs/page.md:15",
    ]


def test_a_longer_fence_shows_a_fence_inside_it_as_text(tmp_path: Path) -> None:
    blocks = page_blocks(
        tmp_path,
        """\
        ````markdown
        ```python
        raise SystemExit("not a block of its own")
        ```
        ````
        """,
    )

    assert len(blocks) == 1
    assert blocks[0].language == "markdown"
    assert blocks[0].check is Check.NONE
    assert "```python\n" in blocks[0].code


def test_an_unclosed_fence_is_a_problem(tmp_path: Path) -> None:
    (block,) = page_blocks(tmp_path, "```python\nx = 1\n")

    assert block.problem == "the ``` fence is never closed"
    assert block.is_checked


def test_an_indented_fence_in_the_readme_loses_its_indentation(tmp_path: Path) -> None:
    (block,) = page_blocks(
        tmp_path, "- item\n\n    ```python\n    if True:\n        x = 1\n    ```\n", "README.md"
    )

    assert block.code == "if True:\n    x = 1\n"
    assert block.problem is None


def test_mkdocs_pages_reject_what_mkdocs_cannot_render(tmp_path: Path) -> None:
    text = (
        "```python test\ndef test_a():\n    pass\n```\n\n"
        "- item\n\n    ```python\n    x = 1\n    ```\n"
    )

    readme_test, readme_indented = page_blocks(tmp_path, text, "README.md")
    docs_test, docs_indented = page_blocks(tmp_path, text, "docs/page.md")

    assert readme_test.problem is None
    assert readme_indented.problem is None
    assert docs_test.problem is not None
    assert "renders the info string 'python test' as plain text" in docs_test.problem
    assert docs_indented.problem is not None
    assert "only recognises fences that start in column 0" in docs_indented.problem


def test_highlight_option_is_not_a_flag(tmp_path: Path) -> None:
    (block,) = page_blocks(tmp_path, '```python hl_lines="1 2"\nx = 1\ny = 2\n```\n')

    assert block.problem is None
    assert block.check is Check.RUN


def test_no_run_comes_from_the_flag_or_a_comment_before_the_fence(tmp_path: Path) -> None:
    blocks = page_blocks(
        tmp_path,
        """\
        ```python no-run
        a = 1
        ```

        <!-- no-run -->

        ```python
        b = 1
        ```

        <!-- something else -->
        ```python
        c = 1
        ```
        """,
        "README.md",
    )

    assert [block.check for block in blocks] == [Check.COMPILE, Check.COMPILE, Check.RUN]


def test_file_comment_names_a_test_module_or_a_support_file(tmp_path: Path) -> None:
    blocks = page_blocks(
        tmp_path,
        """\
        ```python
        # file: conftest.py
        ```

        ```toml
        # file: pyproject.toml
        ```

        ```python
        # file: test_greeting.py
        ```

        ```python test
        def test_a():
            pass
        ```
        """,
        "README.md",
    )

    conftest, pyproject, named, flagged = blocks
    assert (conftest.check, conftest.is_support_file) == (Check.COMPILE, True)
    assert (pyproject.check, pyproject.is_support_file) == (Check.TOML, True)
    assert (named.check, named.target_name, named.is_support_file) == (
        Check.PYTEST,
        "test_greeting.py",
        False,
    )
    assert (flagged.check, flagged.target_name) == (Check.PYTEST, "test_README_13.py")


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("```python nope\nx = 1\n```\n", "unknown flag(s) ['nope']"),
        ("```python test\n# file: helpers.py\n```\n", "name it test_*.py or *_test.py"),
        ("```python\n# file: ../test_x.py\n```\n", "must name a relative path without '..'"),
    ],
)
def test_malformed_blocks_carry_a_problem(tmp_path: Path, text: str, problem: str) -> None:
    (block,) = page_blocks(tmp_path, text, "README.md")

    assert block.problem is not None
    assert problem in block.problem


def test_pages_are_the_readme_then_docs_in_path_order(tmp_path: Path) -> None:
    write_page(tmp_path, "docs/sub/b.md", "```python\nb = 1\n```\n")
    write_page(tmp_path, "docs/a.md", "```python\na = 1\n```\n")
    write_page(tmp_path, "docs/notes.txt", "```python\nnot = markdown\n```\n")
    write_page(tmp_path, "other/c.md", "```python\nc = 1\n```\n")

    assert markdown_pages(tmp_path) == [tmp_path / "docs/a.md", tmp_path / "docs/sub/b.md"]

    write_page(tmp_path, "README.md", "```python\nr = 1\n```\n")

    assert [block.id for block in collect_blocks(tmp_path)] == [
        "README.md:1",
        "docs/a.md:1",
        "docs/sub/b.md:1",
    ]


def test_the_contributing_page_shows_every_kind_of_check() -> None:
    # docs/contributing.md documents the conventions with examples that run: one of each kind.
    kinds = {
        block.check
        for block in collect_blocks(ROOT)
        if block.page == "docs/contributing.md" and block.is_checked
    }

    assert kinds == {Check.RUN, Check.PYTEST, Check.COMPILE, Check.TOML}


# --- Python blocks: one namespace per page ------------------------------------------------------


def test_blocks_of_a_page_run_in_order_in_one_namespace(tmp_path: Path) -> None:
    blocks = page_blocks(
        tmp_path,
        """\
        ```python
        log = ["first"]
        ```

        ```python
        log.append("second")
        assert log == ["first", "second"]
        ```
        """,
    )
    checker = make_checker(tmp_path, blocks)

    for block in blocks:
        checker.check(block, no_pytester)


def test_pages_do_not_share_a_namespace(tmp_path: Path) -> None:
    first = page_blocks(tmp_path, "```python\nsecret = 1\n```\n", "docs/a.md")
    second = page_blocks(tmp_path, "```python\nsecret\n```\n", "docs/b.md")
    checker = make_checker(tmp_path, [*first, *second])

    checker.check(first[0], no_pytester)
    with pytest.raises(ExampleFailed, match="NameError: name 'secret' is not defined"):
        checker.check(second[0], no_pytester)


def test_a_failing_block_is_reported_with_page_line_and_exception(tmp_path: Path) -> None:
    blocks = page_blocks(
        tmp_path,
        """\
        Intro.

        ```python
        numbers = [1, 2]
        total = sum(numbers) / 0
        ```
        """,
    )

    with pytest.raises(ExampleFailed) as failure:
        make_checker(tmp_path, blocks).check(blocks[0], no_pytester)

    report = str(failure.value)
    assert report.startswith(
        "docs/page.md:3: the example raised ZeroDivisionError: division by zero "
        "(at docs/page.md:5)\n"
    )
    # The traceback shows the page's own line, and no harness frame.
    assert f'File "{tmp_path / "docs/page.md"}", line 5, in <module>' in report
    assert "total = sum(numbers) / 0" in report
    assert "_docblocks.py" not in report


def test_later_blocks_of_the_page_are_skipped_naming_the_failed_block(tmp_path: Path) -> None:
    blocks = page_blocks(
        tmp_path,
        """\
        ```python
        ready = True
        ```

        ```python
        raise RuntimeError("broken example")
        ```

        ```python
        print("never runs")
        ```

        ```toml
        still = "checked"
        ```
        """,
    )
    checker = make_checker(tmp_path, blocks)
    first, broken, later, toml_block = blocks

    checker.check(first, no_pytester)
    with pytest.raises(ExampleFailed, match="RuntimeError: broken example"):
        checker.check(broken, no_pytester)
    with pytest.raises(ExampleSkipped) as skipped:
        checker.check(later, no_pytester)
    checker.check(toml_block, no_pytester)

    assert str(skipped.value) == (
        "docs/page.md:9 not run: the earlier example docs/page.md:5 failed, and the python "
        "blocks of docs/page.md share one namespace"
    )


def test_a_block_checked_first_runs_the_earlier_blocks_itself(tmp_path: Path) -> None:
    # What a pytest-xdist worker does when it gets a page's last block only.
    blocks = page_blocks(
        tmp_path,
        """\
        ```python
        log = ["first"]
        ```

        ```python
        log.append("second")
        ```

        ```python
        assert log == ["first", "second"]
        ```
        """,
    )

    make_checker(tmp_path, blocks).check(blocks[2], no_pytester)


def test_an_earlier_block_failing_on_replay_skips_the_block(tmp_path: Path) -> None:
    blocks = page_blocks(tmp_path, "```python\n1 / 0\n```\n\n```python\nx = 1\n```\n")

    with pytest.raises(ExampleSkipped, match=r"the earlier example docs/page\.md:1 failed"):
        make_checker(tmp_path, blocks).check(blocks[1], no_pytester)


def test_checking_a_block_again_starts_its_page_afresh(tmp_path: Path) -> None:
    blocks = page_blocks(
        tmp_path, "```python\ncount = 0\n```\n\n```python\ncount += 1\nassert count == 1\n```\n"
    )
    checker = make_checker(tmp_path, blocks)

    for block in [*blocks, blocks[1], blocks[1]]:
        checker.check(block, no_pytester)


def test_blocks_run_in_one_temporary_directory_per_page(tmp_path: Path) -> None:
    blocks = page_blocks(
        tmp_path,
        """\
        ```python
        from pathlib import Path
        Path("notes.txt").write_text("kept")
        ```

        ```python
        assert Path("notes.txt").read_text() == "kept"
        ```
        """,
    )
    checker = make_checker(tmp_path, blocks)
    before = Path.cwd()

    for block in blocks:
        checker.check(block, no_pytester)

    assert Path.cwd() == before
    assert not (before / "notes.txt").exists()
    assert [path.name for path in (tmp_path / "work").glob("*/notes.txt")] == ["notes.txt"]


def test_top_level_await_runs_in_an_event_loop(tmp_path: Path) -> None:
    blocks = page_blocks(
        tmp_path,
        """\
        ```python
        import asyncio

        async def answer() -> int:
            await asyncio.sleep(0)
            return 42

        value = await answer()
        ```

        ```python
        assert value == 42
        ```
        """,
    )
    checker = make_checker(tmp_path, blocks)

    for block in blocks:
        checker.check(block, no_pytester)


def test_a_failure_after_await_is_reported_with_its_line(tmp_path: Path) -> None:
    (block,) = page_blocks(
        tmp_path, "```python\nimport asyncio\nawait asyncio.sleep(0)\nraise KeyError('k')\n```\n"
    )

    with pytest.raises(ExampleFailed, match=r"KeyError: 'k' \(at docs/page\.md:4\)"):
        make_checker(tmp_path, [block]).check(block, no_pytester)


def test_examples_get_their_own_future_imports_and_a_registered_module(tmp_path: Path) -> None:
    blocks = page_blocks(
        tmp_path,
        """\
        ```python
        import typing

        def plain(x: int) -> None: ...

        # The harness's own `from __future__ import annotations` does not leak in.
        assert plain.__annotations__ == {"x": int, "return": None}
        ```

        ```python
        from __future__ import annotations

        import typing

        class Reply(typing.TypedDict):
            call: str

        # String annotations resolve through sys.modules[Reply.__module__].
        assert typing.get_type_hints(Reply) == {"call": str}
        ```
        """,
    )
    checker = make_checker(tmp_path, blocks)

    for block in blocks:
        checker.check(block, no_pytester)


def test_a_syntax_error_is_reported_at_its_page_line(tmp_path: Path) -> None:
    (block,) = page_blocks(tmp_path, "Text.\n\n```python\nx = 1\ny = (\n```\n")

    with pytest.raises(ExampleFailed) as failure:
        make_checker(tmp_path, [block]).check(block, no_pytester)

    assert str(failure.value).startswith("docs/page.md:3: the example does not compile: ")
    assert "(at docs/page.md:5)" in str(failure.value)


def test_a_block_with_a_problem_fails_and_skips_the_rest(tmp_path: Path) -> None:
    blocks = page_blocks(tmp_path, "```python nope\nx = 1\n```\n\n```python\nx\n```\n", "README.md")
    checker = make_checker(tmp_path, blocks)

    with pytest.raises(ExampleFailed, match=r"^README\.md:1: unknown flag\(s\) \['nope'\]"):
        checker.check(blocks[0], no_pytester)
    with pytest.raises(ExampleSkipped, match=r"earlier example README\.md:1 failed"):
        checker.check(blocks[1], no_pytester)


# --- no-run, TOML and YAML blocks ---------------------------------------------------------------


def test_a_no_run_block_is_compiled_but_not_executed(tmp_path: Path) -> None:
    blocks = page_blocks(
        tmp_path,
        """\
        <!-- no-run -->
        ```python
        from pathlib import Path
        Path("ran.txt").write_text("it ran")
        raise SystemExit("a no-run block must not run")
        ```
        """,
    )

    make_checker(tmp_path, blocks).check(blocks[0], no_pytester)

    assert not list(tmp_path.rglob("ran.txt"))


def test_a_syntax_error_in_a_no_run_block_still_fails(tmp_path: Path) -> None:
    (block,) = page_blocks(
        tmp_path, "<!-- no-run -->\n```python\nimport httpx\ndef broken(:\n```\n"
    )

    with pytest.raises(ExampleFailed, match=r"^docs/page\.md:2: the example does not compile"):
        make_checker(tmp_path, [block]).check(block, no_pytester)


def test_valid_toml_and_yaml_pass(tmp_path: Path) -> None:
    blocks = page_blocks(
        tmp_path,
        """\
        ```toml
        [tool.pytest.ini_options]
        addopts = ["--strict-markers"]
        ```

        ```yaml
        interactions:
          - request: {method: POST}
        ---
        second: document
        ```
        """,
    )
    checker = make_checker(tmp_path, blocks)

    for block in blocks:
        checker.check(block, no_pytester)


def test_invalid_toml_fails_naming_the_page(tmp_path: Path) -> None:
    (block,) = page_blocks(tmp_path, "Text.\n\n```toml\n[tool]\nkey = \n```\n")

    with pytest.raises(ExampleFailed, match=r"^docs/page\.md:3: invalid TOML: .*docs/page\.md:4"):
        make_checker(tmp_path, [block]).check(block, no_pytester)


def test_invalid_yaml_fails_at_its_page_line(tmp_path: Path) -> None:
    (block,) = page_blocks(tmp_path, "```yaml\nfine: 1\nbroken: [1, 2\n```\n")

    with pytest.raises(ExampleFailed, match=r"^docs/page\.md:1: invalid YAML \(at docs/page\.md:"):
        make_checker(tmp_path, [block]).check(block, no_pytester)


# --- Test-module blocks, run with pytester ------------------------------------------------------


def test_a_passing_test_module_passes(tmp_path: Path, pytester: pytest.Pytester) -> None:
    (block,) = page_blocks(
        tmp_path,
        """\
        ```python
        # file: test_arithmetic.py
        def test_addition():
            assert 1 + 1 == 2
        ```
        """,
    )

    make_checker(tmp_path, [block]).check(block, lambda: pytester)

    assert (pytester.path / "test_arithmetic.py").is_file()


def test_a_failing_test_inside_a_module_is_reported(
    tmp_path: Path, pytester: pytest.Pytester
) -> None:
    (block,) = page_blocks(
        tmp_path,
        """\
        Intro.

        ```python
        # file: test_arithmetic.py
        def test_addition():
            assert 1 + 1 == 2

        def test_wrong():
            assert 1 + 1 == 3
        ```
        """,
        "README.md",
    )

    with pytest.raises(ExampleFailed) as failure:
        make_checker(tmp_path, [block]).check(block, lambda: pytester)

    report = str(failure.value)
    assert report.startswith(
        "README.md:3: the test module test_arithmetic.py must pass at least one test with no "
        "failures or errors; pytest said '1 failed, 1 passed'"
    )
    # Line numbers in the module are the page's: `assert 1 + 1 == 3` is README.md line 9.
    assert "test_arithmetic.py:9: AssertionError" in report


def test_a_test_module_without_tests_fails(tmp_path: Path, pytester: pytest.Pytester) -> None:
    (block,) = page_blocks(tmp_path, "```python\n# file: test_empty.py\nx = 1\n```\n")

    with pytest.raises(ExampleFailed, match="exited with 5"):
        make_checker(tmp_path, [block]).check(block, lambda: pytester)


def test_warnings_fail_a_test_module(tmp_path: Path, pytester: pytest.Pytester) -> None:
    (block,) = page_blocks(
        tmp_path,
        "```python\n# file: test_warns.py\nimport warnings\n\n"
        "def test_a():\n    warnings.warn(UserWarning('sloppy'))\n```\n",
    )

    with pytest.raises(ExampleFailed, match="UserWarning: sloppy"):
        make_checker(tmp_path, [block]).check(block, lambda: pytester)


def test_support_files_are_written_next_to_later_test_modules(
    tmp_path: Path, pytester: pytest.Pytester
) -> None:
    blocks = page_blocks(
        tmp_path,
        """\
        ```python
        # file: conftest.py
        import pytest

        @pytest.fixture
        def greeting() -> str:
            return "hello"
        ```

        ```toml
        # file: pyproject.toml
        [tool.pytest.ini_options]
        markers = ["friendly: a friendly test"]
        addopts = ["--strict-markers"]
        ```

        ```python
        # file: test_greeting.py
        import pytest

        @pytest.mark.friendly
        def test_greeting(greeting):
            assert greeting == "hello"
        ```
        """,
    )
    checker = make_checker(tmp_path, blocks)
    conftest, pyproject, test_module = blocks

    assert checker.support_files(test_module) == [conftest, pyproject]
    for block in blocks:
        checker.check(block, lambda: pytester)


def test_a_test_module_flagged_in_the_readme_runs_under_a_generated_name(
    tmp_path: Path, pytester: pytest.Pytester
) -> None:
    (block,) = page_blocks(
        tmp_path,
        "```python test\nimport pytest\n\n"
        "@pytest.mark.asyncio\nasync def test_a():\n    pass\n```\n",
        "README.md",
    )

    make_checker(tmp_path, [block]).check(block, lambda: pytester)

    assert (pytester.path / "test_README_1.py").is_file()


def test_a_module_name_already_imported_here_runs_in_a_subprocess(
    tmp_path: Path, pytester: pytest.Pytester
) -> None:
    # This very module is imported as `test_docs_examples_selftest`: an in-process run of a
    # page's module of that name would import this one instead and fail.
    (block,) = page_blocks(
        tmp_path,
        "```python\n# file: test_docs_examples_selftest.py\ndef test_a():\n    pass\n```\n",
    )

    make_checker(tmp_path, [block]).check(block, lambda: pytester)


# --- The harness the way it runs: pytest on a synthetic project ---------------------------------


@pytest.fixture
def docs_project(pytester: pytest.Pytester) -> pytest.Pytester:
    """A project with this harness, a README and two docs pages, one with a failing block."""
    tests = pytester.mkdir("tests")
    for name in ["_docblocks.py", "test_docs_examples.py"]:
        (tests / name).write_text((HERE / name).read_text(encoding="utf-8"), encoding="utf-8")
    (tests / "conftest.py").write_text('pytest_plugins = ["pytester"]\n', encoding="utf-8")
    write_page(pytester.path, "README.md", "```python\nfrom pathlib import Path\n```\n")
    write_page(
        pytester.path,
        "docs/guide.md",
        """\
        # Guide

        ```python
        value = 1
        ```

        ```python
        value / 0
        ```

        ```python
        value += 1
        ```

        ```bash
        make test
        ```
        """,
    )
    write_page(
        pytester.path,
        "docs/chain.md",
        "```python\na = 1\n```\n\n```python\nb = a + 1\n```\n\n```python\nassert b == 2\n```\n",
    )
    return pytester


# These runs are subprocesses: in-process, the project's module names would clash with the
# modules of this test session.


def test_each_block_is_a_test_with_a_page_line_id(docs_project: pytest.Pytester) -> None:
    result = docs_project.runpytest_subprocess(*SELFTEST_PYTEST_ARGS, "-v", "-rs")

    result.assert_outcomes(passed=5, failed=1, skipped=1)
    result.stdout.fnmatch_lines(
        [
            "*test_docs_example?README.md:1? PASSED*",
            "*test_docs_example?docs/chain.md:1? PASSED*",
            "*test_docs_example?docs/chain.md:5? PASSED*",
            "*test_docs_example?docs/chain.md:9? PASSED*",
            "*test_docs_example?docs/guide.md:3? PASSED*",
            "*test_docs_example?docs/guide.md:7? FAILED*",
            "*test_docs_example?docs/guide.md:11? SKIPPED*",
            "docs/guide.md:7: the example raised ZeroDivisionError: division by zero "
            "(at docs/guide.md:8)",
            "SKIPPED * docs/guide.md:11 not run: the earlier example docs/guide.md:7 failed, *",
        ]
    )
    result.stdout.no_fnmatch_line("*During handling of the above exception*")


def test_a_block_selected_alone_runs_the_earlier_blocks_first(
    docs_project: pytest.Pytester,
) -> None:
    passed = docs_project.runpytest_subprocess(*SELFTEST_PYTEST_ARGS, "-k", "docs/chain.md:9")
    skipped = docs_project.runpytest_subprocess(
        *SELFTEST_PYTEST_ARGS, "-rs", "-k", "docs/guide.md:11"
    )

    passed.assert_outcomes(passed=1, deselected=6)
    skipped.assert_outcomes(skipped=1, deselected=6)
    skipped.stdout.fnmatch_lines(["*the earlier example docs/guide.md:7 failed*"])


def test_under_xdist_the_outcomes_are_the_same(docs_project: pytest.Pytester) -> None:
    pytest.importorskip("xdist")
    # Each worker that gets a later block re-runs the earlier blocks of its page itself.
    result = docs_project.runpytest_subprocess(*SELFTEST_PYTEST_ARGS, "-n", "2")

    result.assert_outcomes(passed=5, failed=1, skipped=1)
