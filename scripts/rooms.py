"""The rooms of the package, as the import contract in pyproject.toml orders them.

Prints the table that docs/contributing.md shows (``--write`` puts it there, between its
markers): one row per room, top layer first, with the first line of the room's docstring.
tests/test_layers.py fails when the page and this table differ.
"""

from __future__ import annotations

import ast
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "contributing.md"
BEGIN = "<!-- rooms: written by scripts/rooms.py from pyproject.toml; do not edit by hand -->"
END = "<!-- /rooms -->"


def layers() -> list[list[str]]:
    """The contract's layers, top first, each a list of the rooms it names."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    (contract,) = config["tool"]["importlinter"]["contracts"]
    return [
        [name.strip() for name in layer.replace("|", ":").split(":")]
        for layer in contract["layers"]
    ]


def source(room: str) -> Path:
    """The file that holds a room's docstring: a package's ``__init__.py`` or the module."""
    path = ROOT.joinpath(*room.split("."))
    return path / "__init__.py" if path.is_dir() else path.with_suffix(".py")


def summary(room: str) -> str:
    tree = ast.parse(source(room).read_text(encoding="utf-8"))
    return (ast.get_docstring(tree) or "").split("\n\n")[0].replace("\n", " ")


def table() -> str:
    rows = ["| Layer | Room | What lives there |", "|---|---|---|"]
    for number, layer in enumerate(layers(), 1):
        for room in layer:
            kind = "/" if source(room).name == "__init__.py" else ".py"
            shown = room.replace(".", "/") + kind
            rows.append(f"| {number} | `{shown}` | {summary(room)} |")
    return "\n".join(rows) + "\n"


def written(page: str) -> str:
    """``page`` with the table between its markers written anew."""
    head, rest = page.split(BEGIN + "\n", 1)
    _, tail = rest.split(END, 1)
    return f"{head}{BEGIN}\n{table()}{END}{tail}"


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        PAGE.write_text(written(PAGE.read_text(encoding="utf-8")), encoding="utf-8")
    else:
        sys.stdout.write(table())
