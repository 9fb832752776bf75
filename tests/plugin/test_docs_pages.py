"""The plugin's pages cannot drift from the code: the settings table and the hook examples.

The examples of the pages are run by ``tests/test_docs_examples.py``; these tests compare what
the pages state with the code they document.
"""

from __future__ import annotations

import inspect
import re
import textwrap
from pathlib import Path

import pytest

from pytest_opdecide import hookspecs
from pytest_opdecide.plugin._settings import DEFAULT_BASE_URL, SETTINGS, Setting, parse_bool

from .support import write_ini

DOCS = Path(__file__).resolve().parents[2] / "docs"
PAGES = ["fixtures.md", "marker.md", "configuration.md", "hooks.md", "guard.md"]
HEADER = (
    "| Setting | Marker keyword | `opdecide_config` key | ini key | Command line | Default "
    "| Meaning |"
)


def _default(setting: Setting) -> str:
    if callable(setting.default):
        assert setting.name == "base_url", "describe the new computed default here"
        return f"`$OPDECIDE_LIVE_URL`, else `{DEFAULT_BASE_URL}`"
    value = setting.default
    if isinstance(value, bool):
        return "`true`" if value else "`false`"
    if value == ():
        return "none"
    return f"`{value}`"


def _flag(setting: Setting, switch: bool) -> str:
    if switch:
        return f"`{setting.flag}`"
    value = "BOOL" if setting.parse is parse_bool else setting.name.upper()
    return f"`{setting.flag}={value}`"


def expected_rows(switches: set[str]) -> list[str]:
    """The table rows, made from ``SETTINGS`` (``switches``: flags that take no value)."""
    dash = "—"
    return [
        "| "
        + " | ".join(
            [
                f"`{s.name}`",
                f"`{s.name}=`" if s.marker else dash,
                f'`"{s.name}"`' if s.fixture else dash,
                f"`{s.ini_name}`" if s.ini else dash,
                _flag(s, s.flag in switches) if s.cli else dash,
                _default(s),
                s.help,
            ]
        )
        + " |"
        for s in SETTINGS
    ]


def _switches(pytester: pytest.Pytester) -> set[str]:
    """The plugin's flags that take no value, read from ``pytest --help``: a flag that takes
    one is shown with its metavar (``--opdecide-seed=SEED``), a switch alone."""
    write_ini(pytester)
    result = pytester.runpytest("--help")
    shown = re.findall(r"^  (--opdecide-[a-z-]+)(=\S+)?", result.stdout.str(), flags=re.MULTILINE)
    return {flag for flag, value in shown if not value}


def test_the_settings_table_matches_the_code(pytester: pytest.Pytester) -> None:
    lines = (DOCS / "configuration.md").read_text(encoding="utf-8").splitlines()
    assert lines.count(HEADER) == 1, "the page has exactly one settings table"
    start = lines.index(HEADER) + 2
    end = start
    while end < len(lines) and lines[end].startswith("|"):
        end += 1
    assert lines[start:end] == expected_rows(_switches(pytester))


def test_the_precedence_is_stated_once_and_right() -> None:
    text = (DOCS / "configuration.md").read_text(encoding="utf-8")
    assert text.count("command line > marker > `opdecide_config` fixture > ini file > default") == 1


def _example(function: object) -> str:
    doc = inspect.getdoc(function) or ""
    _, _, after = doc.partition(".. code-block:: python\n")
    return textwrap.dedent(after).strip() + "\n"


@pytest.mark.parametrize("name", sorted(n for n in vars(hookspecs) if n.startswith("pytest_")))
def test_every_hook_has_a_section_with_its_docstring_example(name: str) -> None:
    text = (DOCS / "hooks.md").read_text(encoding="utf-8")
    assert f"## `{name}`" in text
    example = _example(getattr(hookspecs, name))
    assert example.startswith(f"def {name}(")
    assert example in text


@pytest.mark.parametrize("page", PAGES)
def test_the_pages_name_only_real_flags_and_ini_keys(page: str) -> None:
    text = (DOCS / page).read_text(encoding="utf-8")
    flags = {s.flag for s in SETTINGS if s.cli}
    ini_keys = {s.ini_name for s in SETTINGS if s.ini}
    assert set(re.findall(r"--opdecide-[a-z-]*[a-z]", text)) <= flags
    named = set(re.findall(r"\bopdecide_[a-z_]*[a-z]\b", text))
    misspelt_on_purpose = {"opdecide_sead", "opdecide_cassete_dir"}
    fixtures = {"opdecide_config", "opdecide_settings", "opdecide_run"}
    assert named <= ini_keys | fixtures | {"opdecide_live"} | (misspelt_on_purpose)


def test_the_fixture_page_has_a_section_per_fixture() -> None:
    text = (DOCS / "fixtures.md").read_text(encoding="utf-8")
    headings = re.findall(r"^## `(\w+)`", text, flags=re.MULTILINE)
    assert headings == [
        "runtime",
        "decision_provider",
        "menu_snapshot",
        "opdecide_config",
        "opdecide_run",
        "opdecide_settings",
    ]
