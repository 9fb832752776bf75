"""mkdocs hook: show the Sphinx roles of docstrings as plain code in the reference pages.

Docstrings write cross-references the Sphinx way (:class:`~pytest_opdecide.Runtime`), which
mkdocstrings renders as the role's name followed by the code. This hook keeps the code and
drops the role, and a leading ``~`` keeps only the last part of the dotted name, as Sphinx does.
"""

from __future__ import annotations

import re
from typing import Any

_ROLE = re.compile(r":(?:py:)?(?:class|func|meth|attr|data|mod|exc|obj|const):(<code>)(~?)([^<]*)")


def _shown(match: re.Match[str]) -> str:
    name = match.group(3)
    if match.group(2):
        name = name.rsplit(".", 1)[-1]
    return f"{match.group(1)}{name}"


def on_page_content(html: str, **kwargs: Any) -> str:
    """Rewrite the roles of one rendered page."""
    return _ROLE.sub(_shown, html)
