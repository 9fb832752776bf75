"""The ``opdecide`` command line."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from typing import Any

__all__ = ["main"]


class UsageError(Exception):
    """Bad command-line input (exit status 2)."""


def load_object(path: str) -> Any:
    """Import ``MODULE:NAME`` (NAME may be dotted) and return the object."""
    module_name, sep, attr = path.partition(":")
    if not sep or not module_name or not attr:
        raise UsageError(f"expected MODULE:NAME, got {path!r}")
    sys.path.insert(0, "")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise UsageError(f"cannot import module {module_name!r}: {exc}") from None
    finally:
        sys.path.pop(0)
    obj: Any = module
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise UsageError(f"module {module_name!r} has no attribute {attr!r}") from None
    return obj


def _menu(args: argparse.Namespace) -> int:
    from pytest_opdecide.decision import render_options

    options = load_object(args.options)
    if callable(options) and not isinstance(options, dict | list):
        options = options()
    try:
        sys.stdout.write(render_options(options))
    except (TypeError, ValueError) as exc:
        raise UsageError(f"{args.options} is not a valid options object: {exc}") from None
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="opdecide", description="Tools for testing LLM decision code."
    )
    parser.add_argument("--version", action="version", version="%(prog)s 0.1.0")
    commands = parser.add_subparsers(dest="command", required=True)
    menu = commands.add_parser("menu", help="print the rendered menu of an options object")
    menu.add_argument(
        "options",
        metavar="MODULE:OPTIONS",
        help="an options dict/list (or a function returning one)",
    )
    menu.set_defaults(run=_menu)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        status: int = args.run(args)
    except UsageError as exc:
        print(f"opdecide: error: {exc}", file=sys.stderr)
        return 2
    return status


if __name__ == "__main__":
    sys.exit(main())
