"""What a misspelt name looks like among those offered: the fakes' "did you mean".

Its own module so that the scripted runtimes need nothing of the question-decision side.
"""

from __future__ import annotations

import difflib
import unicodedata
from collections.abc import Sequence

__all__ = ["closest", "did_you_mean"]


def _fold(name: str) -> str:
    return unicodedata.normalize("NFC", name).strip().casefold()


def closest(wrong: str, offered: Sequence[str], *, cutoff: float = 0.75) -> str | None:
    """The one of ``offered`` that ``wrong`` looks like (a typo, other letter case, spacing or
    Unicode form), or ``None``."""
    folded = {_fold(name): name for name in offered}
    same = folded.get(_fold(wrong))
    if same is not None:
        return same
    close = difflib.get_close_matches(wrong, list(offered), n=1, cutoff=cutoff)
    return close[0] if close else None


def did_you_mean(wrong: str, offered: Sequence[str]) -> str:
    """`` Did you mean 'billing'?`` when ``wrong`` looks like one of ``offered``; empty
    otherwise."""
    same = closest(wrong, offered)
    return "" if same is None else f" Did you mean {same!r}?"
