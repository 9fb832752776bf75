"""Misspelt ini keys of this plugin: refused (or warned about) with a "did you mean".

pytest itself says only ``Unknown config option: opdecide_cassete_dir``, and only after the
whole collection. :func:`check` runs at configure time: each key of the configuration file
that pytest does not know (``config.getini`` raises ``ValueError`` for it) and that starts
with ``opdecide`` or looks like one of this plugin's keys is reported with the closest key.
Under ``--strict-config`` (or ``strict_config``/``strict`` in the file) it is a usage error, as
pytest's own check is; otherwise a ``PytestConfigWarning``.

The keys are read from the file pytest chose (``config.inipath``), in each of the formats it
reads: ``pytest.ini``/``tox.ini``/``setup.cfg`` sections and ``pyproject.toml``/``pytest.toml``
tables.
"""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest

__all__ = ["check"]


def _file_keys(path: Path) -> list[str]:
    """The keys of pytest's section in the configuration file at ``path``."""
    if path.suffix == ".toml":
        import tomllib

        data = tomllib.loads(path.read_text(encoding="utf-8"))
        if path.name == "pyproject.toml":
            tool = data.get("tool", {}).get("pytest", {})
            table = tool.get("ini_options", tool) if isinstance(tool, dict) else {}
        else:
            table = data.get("pytest", data)
        return [key for key in table if isinstance(key, str)] if isinstance(table, dict) else []
    import configparser

    parser = configparser.ConfigParser(interpolation=None)
    parser.read(path, encoding="utf-8")
    section = "tool:pytest" if path.name == "setup.cfg" else "pytest"
    return list(parser[section]) if parser.has_section(section) else []


def _unknown(config: pytest.Config, key: str) -> bool:
    try:
        config.getini(key)
    except ValueError:
        return True
    return False


def _strict(config: pytest.Config) -> bool:
    if config.getoption("strict_config", False):
        return True
    for name in ("strict_config", "strict"):
        try:
            if config.getini(name):
                return True
        except ValueError:
            continue
    return False


def check(config: pytest.Config, ini_names: list[str]) -> None:
    """Refuse (or warn about) misspelt keys of this plugin in the configuration file.

    Args:
        config: The run's configuration.
        ini_names: This plugin's ini keys (``opdecide_cassette_dir``...).
    """
    path = config.inipath
    if path is None or not path.is_file():
        return
    try:
        keys = _file_keys(path)
    except Exception:  # a file pytest read but this check cannot: pytest's own check remains
        return
    problems: list[str] = []
    for key in keys:
        close = difflib.get_close_matches(key, ini_names, n=1, cutoff=0.75)
        if not (key.startswith("opdecide") or close) or not _unknown(config, key):
            continue
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        problems.append(f"{key!r}{hint}")
    if not problems:
        return
    message = (
        f"{path.name}: unknown opdecide ini key {'; '.join(problems)}. "
        f"The plugin's keys: {', '.join(sorted(ini_names))}"
    )
    if _strict(config):
        raise pytest.UsageError(message)
    config.issue_config_time_warning(pytest.PytestConfigWarning(message), stacklevel=2)
