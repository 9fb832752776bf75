"""Boolean words, read the same way everywhere (settings, provider config slots, capabilities).

Dependency-free on purpose: the pytest plugin imports it at start-up.
"""

from __future__ import annotations

from typing import Final

__all__ = ["FALSE_WORDS", "TRUE_WORDS", "bool_word"]

TRUE_WORDS: Final = frozenset({"1", "true", "yes", "on"})
FALSE_WORDS: Final = frozenset({"0", "false", "no", "off"})


def bool_word(text: str) -> bool | None:
    """``True`` for 1/true/yes/on, ``False`` for 0/false/no/off (any case, spaces ignored),
    ``None`` for anything else: each caller says what it accepts and how it fails."""
    word = text.strip().lower()
    if word in TRUE_WORDS:
        return True
    if word in FALSE_WORDS:
        return False
    return None
