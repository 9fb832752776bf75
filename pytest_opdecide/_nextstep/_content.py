"""Content blocks: what ``exec`` accepts as ``content``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["content_blocks"]


def content_blocks(content: Any) -> tuple[Mapping[str, Any], ...]:
    """``content`` (a string or a list of blocks/strings) as a tuple of content blocks.

    Raises:
        TypeError: ``content`` is neither, or a block is not a mapping with a ``type``.
    """
    if isinstance(content, str):
        return ({"type": "text", "text": content},)
    if isinstance(content, list | tuple):
        blocks: list[Mapping[str, Any]] = []
        for i, block in enumerate(content):
            if isinstance(block, str):
                blocks.append({"type": "text", "text": block})
            elif isinstance(block, Mapping) and isinstance(block.get("type"), str):
                if block["type"] == "text" and not isinstance(block.get("text"), str):
                    raise TypeError(f"content block {i} has type 'text' but no string 'text'")
                blocks.append(block)
            else:
                raise TypeError(
                    f"content block {i} must be a string or a mapping with a 'type', got {block!r}"
                )
        return tuple(blocks)
    raise TypeError(
        f"content must be a string or a list of content blocks, got {type(content).__name__}"
    )
