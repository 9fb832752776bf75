"""Find the fenced code blocks of the project's markdown pages and check each one.

``test_docs_examples.py`` runs these checks on ``README.md`` and ``docs/**/*.md``;
``test_docs_examples_selftest.py`` runs them on small synthetic pages. The conventions a page
author relies on are documented in ``docs/contributing.md``; in short:

* a ``python`` block runs with ``exec``; the ``python`` blocks of one page run in order in one
  shared module namespace, with a per-page temporary directory as the working directory;
* a ``python`` block whose first line is ``# file: test_name.py`` (or whose info string is
  ``python test``) is a pytest test module, run in an isolated directory with ``pytester``;
* a block whose first line is ``# file: other_name`` is a support file (``conftest.py``,
  ``pyproject.toml``...) written next to every later test module of the same page;
* a ``python`` block preceded by ``<!-- no-run -->`` (or ``python no-run``) is only compiled;
* ``toml`` and ``yaml`` blocks are parsed; other languages are not checked.
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import enum
import importlib.util
import inspect
import re
import sys
import tomllib
import traceback
import types
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pytest

PYTHON_LANGUAGES = frozenset({"python", "py", "python3"})
"""Info-string languages whose blocks are Python code."""

TOML_LANGUAGES = frozenset({"toml"})
YAML_LANGUAGES = frozenset({"yaml", "yml"})

NO_RUN_FLAG = "no-run"
TEST_FLAG = "test"

PYTEST_ARGS: tuple[str, ...] = ("-p", "no:cacheprovider", "-W", "error")
"""Arguments of the pytest run of a test-module block (its own directory is the rootdir).

Warnings are errors there as in the project's own suite.
"""
if importlib.util.find_spec("pytest_asyncio") is not None:
    # The project's own setting; unset, pytest-asyncio warns at start-up, an error under -W error.
    PYTEST_ARGS += ("-o", "asyncio_default_fixture_loop_scope=function")

_OPENING_FENCE = re.compile(r"^(?P<indent> *)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
_CLOSING_FENCE = re.compile(r"^(?P<indent> *)(?P<fence>`{3,}|~{3,}) *$")
_NO_RUN_COMMENT = re.compile(r"^\s*<!--\s*no-run\s*-->\s*$")
_FILE_COMMENT = re.compile(r"^#\s*file:\s*(?P<name>\S+)\s*$")
_HIGHLIGHT_OPTION = re.compile(r"""\bhl_lines=(["']).*?\1""")
_TEST_MODULE = re.compile(r"^(test_.*|.*_test)\.py$")


class Check(enum.Enum):
    """What the harness does with a block."""

    RUN = "run"
    """Execute it in the page's shared namespace."""
    PYTEST = "pytest"
    """Write it as a test module and run pytest on it."""
    COMPILE = "compile"
    """Compile it without running it."""
    TOML = "toml"
    """Parse it with ``tomllib``."""
    YAML = "yaml"
    """Parse it with ``yaml.safe_load_all``."""
    NONE = "none"
    """Nothing: the language is not checked (``bash``, ``console``, ``text``...)."""


class ExampleFailed(Exception):
    """A block failed its check. ``str()`` is the report: ``page:line``, then what went wrong."""


class ExampleSkipped(Exception):
    """A block was not run because an earlier block of its page failed. ``str()`` is the reason."""


@dataclass(frozen=True)
class CodeBlock:
    """One fenced code block of a markdown page.

    Attributes:
        path: The page's file.
        page: The page's path as shown in test ids, e.g. ``docs/index.md``.
        line: The 1-based line of the opening fence; the code starts on the next line.
        language: The first word of the info string, lower-cased (``""`` when there is none).
        code: The block's content, with the fence's indentation removed.
        file_name: The name declared by a first line ``# file: NAME``, if any.
        test: The info string carries the ``test`` flag.
        no_run: The info string carries ``no-run``, or ``<!-- no-run -->`` precedes the fence.
        problem: Why the block is malformed (an unclosed fence, an info string that mkdocs cannot
            render...), or ``None``. A block with a problem fails its check.
    """

    path: Path
    page: str
    line: int
    language: str
    code: str
    file_name: str | None = None
    test: bool = False
    no_run: bool = False
    problem: str | None = None

    @property
    def id(self) -> str:
        """``page:line``, the test id of the block."""
        return f"{self.page}:{self.line}"

    @property
    def check(self) -> Check:
        """What the harness does with this block."""
        if self.language in PYTHON_LANGUAGES:
            if self.no_run:
                return Check.COMPILE
            if self.test or (self.file_name is not None and is_test_module(self.file_name)):
                return Check.PYTEST
            if self.file_name is not None:
                return Check.COMPILE  # A support module such as conftest.py: written, not run.
            return Check.RUN
        if self.language in TOML_LANGUAGES:
            return Check.TOML
        if self.language in YAML_LANGUAGES:
            return Check.YAML
        return Check.NONE

    @property
    def is_checked(self) -> bool:
        """The block gets a test: its language is checked, or it is malformed."""
        return self.check is not Check.NONE or self.problem is not None

    @property
    def is_support_file(self) -> bool:
        """The block is written next to the later test modules of its page."""
        return self.file_name is not None and self.check is not Check.PYTEST and not self.no_run

    @property
    def target_name(self) -> str:
        """The file name the block is written to when it is a test module or a support file."""
        if self.file_name is not None:
            return self.file_name
        return f"test_{_identifier(PurePosixPath(self.page).stem)}_{self.line}.py"


def _identifier(text: str) -> str:
    """``text`` with every character that cannot appear in a Python name replaced by ``_``."""
    return re.sub(r"\W", "_", text)


def is_test_module(file_name: str) -> bool:
    """Whether pytest collects ``file_name`` with its default ``python_files`` patterns."""
    return _TEST_MODULE.match(PurePosixPath(file_name).name) is not None


def markdown_pages(root: Path) -> list[Path]:
    """``README.md`` (when it exists) and every ``docs/**/*.md`` below ``root``, sorted."""
    pages = [root / "README.md"] if (root / "README.md").is_file() else []
    docs = root / "docs"
    if docs.is_dir():
        pages.extend(sorted(path for path in docs.rglob("*.md") if path.is_file()))
    return pages


def collect_blocks(root: Path) -> list[CodeBlock]:
    """Every fenced code block of the project's markdown pages, in page and line order."""
    blocks: list[CodeBlock] = []
    for path in markdown_pages(root):
        page = path.relative_to(root).as_posix()
        blocks.extend(
            parse_blocks(
                path.read_text(encoding="utf-8"),
                path=path,
                page=page,
                rendered_by_mkdocs=page.startswith("docs/"),
            )
        )
    return blocks


def parse_blocks(
    text: str, *, path: Path, page: str, rendered_by_mkdocs: bool = False
) -> list[CodeBlock]:
    """The fenced code blocks of one markdown text.

    Fences follow CommonMark: three or more backticks or tildes, closed by a fence of the same
    character at least as long; a longer outer fence can therefore show a fence inside it.

    Args:
        text: The markdown source.
        path: The page's file, used as the file name of compiled code (so that tracebacks and
            ``inspect`` show the page's lines).
        page: The page's path as shown in test ids.
        rendered_by_mkdocs: The page is part of the mkdocs site. Its fences must then start in
            column 0 and carry no words after the language, because python-markdown's
            ``fenced_code`` extension renders anything else as plain text.

    Returns:
        The blocks in line order, including the ones whose language is not checked.
    """
    lines = text.splitlines()
    blocks: list[CodeBlock] = []
    index = 0
    while index < len(lines):
        opening = _OPENING_FENCE.match(lines[index])
        if opening is None or (opening["fence"][0] == "`" and "`" in opening["info"]):
            index += 1
            continue
        fence, indent, info = opening["fence"], len(opening["indent"]), opening["info"].strip()
        start = index
        body: list[str] = []
        closed = False
        index += 1
        while index < len(lines):
            closing = _CLOSING_FENCE.match(lines[index])
            index += 1
            if (
                closing is not None
                and closing["fence"][0] == fence[0]
                and len(closing["fence"]) >= len(fence)
                and len(closing["indent"]) <= indent + 3
            ):
                closed = True
                break
            body.append(_remove_indent(lines[index - 1], indent))
        blocks.append(
            _make_block(
                path=path,
                page=page,
                line=start + 1,
                info=info,
                body=body,
                preceding=_preceding_line(lines, start),
                problems=[
                    *([] if closed else [f"the {fence} fence is never closed"]),
                    *(_mkdocs_problems(info, indent) if rendered_by_mkdocs else []),
                ],
            )
        )
    return blocks


def _remove_indent(line: str, indent: int) -> str:
    """Remove up to ``indent`` leading spaces, as CommonMark does for an indented fence."""
    spaces = len(line) - len(line.lstrip(" "))
    return line[min(spaces, indent) :]


def _preceding_line(lines: Sequence[str], index: int) -> str:
    """The last non-blank line before ``lines[index]``, or ``""``."""
    for line in reversed(lines[:index]):
        if line.strip():
            return line
    return ""


def _mkdocs_problems(info: str, indent: int) -> list[str]:
    problems = []
    if indent:
        problems.append(
            "the fence is indented, and mkdocs' fenced_code extension only recognises fences "
            "that start in column 0: unindent the block (it cannot sit inside a list item)"
        )
    if len(_HIGHLIGHT_OPTION.sub("", info).split()) > 1:
        problems.append(
            f"mkdocs' fenced_code extension renders the info string {info!r} as plain text: "
            "keep only the language, and write `# file: test_name.py` as the first line of a "
            "test module or put `<!-- no-run -->` on the line before the fence"
        )
    return problems


def _make_block(
    *,
    path: Path,
    page: str,
    line: int,
    info: str,
    body: list[str],
    preceding: str,
    problems: list[str],
) -> CodeBlock:
    words = _HIGHLIGHT_OPTION.sub("", info).split()
    language = words[0].lower() if words else ""
    flags = words[1:]
    file_comment = _FILE_COMMENT.match(body[0]) if body else None
    file_name = file_comment["name"] if file_comment else None
    if language in PYTHON_LANGUAGES:
        unknown = [flag for flag in flags if flag not in {TEST_FLAG, NO_RUN_FLAG}]
        if unknown:
            problems.append(
                f"unknown flag(s) {unknown} in the info string {info!r}: "
                f"only {TEST_FLAG!r} and {NO_RUN_FLAG!r} are understood"
            )
        if TEST_FLAG in flags and file_name is not None and not is_test_module(file_name):
            problems.append(
                f"a `python test` block is a test module, but it is named {file_name!r}: "
                "name it test_*.py or *_test.py"
            )
    if file_name is not None:
        name = PurePosixPath(file_name)
        if name.is_absolute() or ".." in name.parts:
            problems.append(f"`# file: {file_name}` must name a relative path without '..'")
    return CodeBlock(
        path=path,
        page=page,
        line=line,
        language=language,
        code="".join(f"{text}\n" for text in body),
        file_name=file_name,
        test=TEST_FLAG in flags,
        no_run=NO_RUN_FLAG in flags or _NO_RUN_COMMENT.match(preceding) is not None,
        problem="; ".join(problems) or None,
    )


def compile_block(block: CodeBlock) -> types.CodeType:
    """Compile a Python block so that line numbers are the page's line numbers.

    Top-level ``await`` is allowed; the code object then has the ``CO_COROUTINE`` flag.

    Raises:
        ExampleFailed: The block does not compile.
    """
    # Blank lines in front make the code's line numbers equal to the page's.
    source = "\n" * block.line + block.code
    try:
        # dont_inherit: this module's `from __future__ import annotations` must not leak in.
        code: types.CodeType = compile(
            source,
            str(block.path),
            "exec",
            flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT,
            dont_inherit=True,
        )
    except SyntaxError as error:
        where = f"{block.page}:{error.lineno}" if error.lineno else block.id
        raise ExampleFailed(
            f"{block.id}: the example does not compile: {error.msg} (at {where})\n\n"
            + "".join(traceback.format_exception_only(error))
        ) from None
    return code


def check_toml(block: CodeBlock) -> None:
    """Parse a TOML block.

    Raises:
        ExampleFailed: The block is not valid TOML.
    """
    try:
        tomllib.loads(block.code)
    except tomllib.TOMLDecodeError as error:
        raise ExampleFailed(
            f"{block.id}: invalid TOML: {error} (line 1 of the block is {block.page}:"
            f"{block.line + 1})"
        ) from None


def check_yaml(block: CodeBlock) -> None:
    """Parse a YAML block (every document of it) with ``yaml.safe_load_all``.

    Raises:
        ExampleFailed: The block is not valid YAML.
    """
    import yaml  # Imported here: only pages with YAML blocks need it.

    try:
        list(yaml.safe_load_all(block.code))
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f"{block.page}:{block.line + 1 + mark.line}" if mark is not None else block.id
        raise ExampleFailed(f"{block.id}: invalid YAML (at {where}):\n{error}") from None


def describe_exception(block: CodeBlock, error: BaseException) -> str:
    """The failure report of a block that raised: ``page:line``, the error, the page's frames."""
    tb = error.__traceback__
    first = tb
    # Show the traceback from the example's own frame on: the harness frames are noise.
    while first is not None and first.tb_frame.f_code.co_filename != str(block.path):
        first = first.tb_next
    shown = first if first is not None else tb
    page_lines = [
        frame.lineno
        for frame in traceback.extract_tb(shown)
        if frame.filename == str(block.path) and frame.lineno is not None
    ]
    where = f" (at {block.page}:{page_lines[-1]})" if page_lines else ""
    headline = f"{block.id}: the example raised {type(error).__name__}: {error}{where}"
    return headline + "\n\n" + "".join(traceback.format_exception(type(error), error, shown))


@contextlib.contextmanager
def _registered(module: types.ModuleType) -> Iterator[None]:
    """Put ``module`` in ``sys.modules`` while an example runs.

    ``typing.get_type_hints``, dataclasses and pydantic look up a class's module there to resolve
    string annotations (``from __future__ import annotations`` in an example).
    """
    name = module.__name__
    previous = sys.modules.get(name)
    sys.modules[name] = module
    try:
        yield
    finally:
        if previous is None:
            sys.modules.pop(name, None)
        else:
            sys.modules[name] = previous


class PageNamespace:
    """The ``python`` blocks of one page, executed in order in one module namespace.

    Args:
        blocks: The page's blocks (any kind; only the ``Check.RUN`` ones are executed).
        workdir: The working directory of every block of the page.
    """

    def __init__(self, blocks: Iterable[CodeBlock], workdir: Path) -> None:
        self.blocks = [block for block in blocks if block.check is Check.RUN]
        self.workdir = workdir
        page = self.blocks[0].page if self.blocks else "page"
        self.module = types.ModuleType("docs_example_" + _identifier(page))
        self.module.__file__ = str(self.blocks[0].path) if self.blocks else None
        self.executed = 0
        """How many blocks, from the first, have been executed (successfully or not)."""
        self.failed: CodeBlock | None = None
        """The block that failed, after which no block of the page runs."""

    def position(self, block: CodeBlock) -> int:
        """The index of ``block`` among the page's executed blocks."""
        return self.blocks.index(block)

    def run(self, block: CodeBlock) -> None:
        """Run ``block``, first running the page's earlier blocks that have not run yet.

        Raises:
            ExampleFailed: ``block`` failed.
            ExampleSkipped: An earlier block failed, now or before.
        """
        position = self.position(block)
        if self.executed > position:
            raise ValueError(f"{block.id} already ran in this namespace: use a new one")
        while self.failed is None and self.executed < position:
            earlier = self.blocks[self.executed]
            with contextlib.suppress(ExampleFailed):
                self._run_one(earlier)
        if self.failed is not None:
            self.executed = max(self.executed, position + 1)
            raise ExampleSkipped(
                f"{block.id} not run: the earlier example {self.failed.id} failed, and the "
                f"python blocks of {block.page} share one namespace"
            )
        self._run_one(block)

    def _run_one(self, block: CodeBlock) -> None:
        try:
            self._execute(block)
        except BaseException:
            self.failed = block
            raise
        finally:
            self.executed += 1

    def _execute(self, block: CodeBlock) -> None:
        if block.problem is not None:
            raise ExampleFailed(f"{block.id}: {block.problem}")
        code = compile_block(block)
        with contextlib.chdir(self.workdir), _registered(self.module):
            try:
                # eval() rather than exec(): with top-level await it returns the coroutine.
                result = eval(code, self.module.__dict__)
                if code.co_flags & inspect.CO_COROUTINE:
                    asyncio.run(result)
            except (Exception, SystemExit) as error:
                raise ExampleFailed(describe_exception(block, error)) from None


def run_pytest_example(
    block: CodeBlock,
    pytester: pytest.Pytester,
    support: Sequence[CodeBlock] = (),
    args: Sequence[str] = PYTEST_ARGS,
) -> None:
    """Write ``block`` (and its ``support`` files) into ``pytester.path`` and run pytest there.

    Python files get blank lines in front so that their line numbers are the page's. The run is
    in-process, unless a written module has the name of a module this process already imported
    (a test module of the project's own suite, say): pytest would then import the wrong one, so
    that run goes to a subprocess.

    Args:
        block: A ``Check.PYTEST`` block.
        pytester: Gives the isolated directory and runs pytest in it.
        support: Files written first (``conftest.py``, ``pyproject.toml``...).
        args: The command-line arguments of the run.

    Raises:
        ExampleFailed: The run did not pass at least one test with no failures and no errors.
    """
    if block.problem is not None:
        raise ExampleFailed(f"{block.id}: {block.problem}")
    clash = False
    for file_block in (*support, block):
        target = pytester.path / file_block.target_name
        target.parent.mkdir(parents=True, exist_ok=True)
        padding = "\n" * file_block.line if file_block.language in PYTHON_LANGUAGES else ""
        target.write_text(padding + file_block.code, encoding="utf-8")
        # pytest itself makes room for a new conftest module; any other name must be free.
        if target.suffix == ".py" and target.name != "conftest.py":
            clash = clash or target.stem in sys.modules
    if clash:
        result = pytester.runpytest_subprocess(*args)
    else:
        _import_session_end_modules()
        result = pytester.runpytest(*args)
    try:
        outcomes = result.parseoutcomes()
    except ValueError:
        outcomes = {}
    passed = outcomes.get("passed", 0)
    bad = {noun: count for noun, count in outcomes.items() if noun in {"failed", "errors"}}
    if result.ret == 0 and passed > 0 and not bad:
        return
    summary = ", ".join(f"{count} {noun}" for noun, count in outcomes.items()) or "no summary"
    output = "\n".join([*result.outlines, *result.errlines]).strip()
    raise ExampleFailed(
        f"{block.id}: the test module {block.target_name} must pass at least one test with no "
        f"failures or errors; pytest said {summary!r} and exited with {int(result.ret)}.\n"
        f"(Line numbers in {block.target_name} are lines of {block.page}.)\n\n{output}"
    )


def _import_session_end_modules() -> None:
    """Import, once, what a plugin imports at the end of every pytest session.

    An in-process pytester run removes from ``sys.modules`` every module imported during the run.
    Hypothesis's plugin imports hypothesis in its terminal summary, so without this every run
    would import hypothesis again: seconds per test-module block.
    """
    with contextlib.suppress(ImportError):
        importlib.import_module("hypothesis.internal.observability")


class DocsExamples:
    """Checks blocks, keeping one shared namespace per page for the ``python`` blocks.

    One instance lives per test process. Under pytest-xdist each worker has its own: a worker
    that gets a page's third block re-runs the first two itself to rebuild the namespace.

    Args:
        blocks: Every block of the pages being checked.
        make_workdir: Makes a new, empty directory; called with a name made from the page.
        pytest_args: The command-line arguments of the pytest run of a test-module block.
    """

    def __init__(
        self,
        blocks: Iterable[CodeBlock],
        make_workdir: Callable[[str], Path],
        pytest_args: Sequence[str] = PYTEST_ARGS,
    ) -> None:
        self._pytest_args = tuple(pytest_args)
        self._pages: dict[Path, list[CodeBlock]] = {}
        for block in blocks:
            self._pages.setdefault(block.path, []).append(block)
        self._make_workdir = make_workdir
        self._namespaces: dict[Path, PageNamespace] = {}

    def check(self, block: CodeBlock, pytester: Callable[[], pytest.Pytester]) -> None:
        """Check one block.

        Args:
            block: One of the blocks given to the constructor.
            pytester: Gives a ``Pytester``; called only for a test-module block.

        Raises:
            ExampleFailed: The block failed its check.
            ExampleSkipped: The block was not run because an earlier block of its page failed.
        """
        check = block.check
        if check is Check.RUN:
            self._namespace_for(block).run(block)
        elif block.problem is not None:
            raise ExampleFailed(f"{block.id}: {block.problem}")
        elif check is Check.PYTEST:
            run_pytest_example(block, pytester(), self.support_files(block), self._pytest_args)
        elif check is Check.COMPILE:
            compile_block(block)
        elif check is Check.TOML:
            check_toml(block)
        elif check is Check.YAML:
            check_yaml(block)

    def support_files(self, block: CodeBlock) -> list[CodeBlock]:
        """The support files declared on ``block``'s page before it."""
        return [
            earlier
            for earlier in self._pages.get(block.path, [])
            if earlier.line < block.line and earlier.is_support_file
        ]

    def _namespace_for(self, block: CodeBlock) -> PageNamespace:
        namespace = self._namespaces.get(block.path)
        # A block that already ran here (a re-run, or a repeated id) starts the page afresh.
        if namespace is None or namespace.executed > namespace.position(block):
            workdir = self._make_workdir(_identifier(block.page))
            namespace = PageNamespace(self._pages[block.path], workdir)
            self._namespaces[block.path] = namespace
        return namespace
