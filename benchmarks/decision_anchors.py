"""Two baselines for ``decision.make``, written for the benchmarks (no code of any other project).

* :func:`reference_make` does the per-call work the reference implementation is described to
  do in ``docs/explanation/differences.md`` (and the project's reference notes): it renders the
  menu on every call, reading each function with ``inspect.signature``, finds the pick (a
  fenced block first, else the first ``{`` that decodes: linear on the replies timed here),
  checks the arguments field by field and calls the function.
* :func:`minimal_make` is the least a hand-written decision does: render the menu, parse the
  JSON, look the option up, call it.

Both take a ``model(prompt) -> str``; neither caches anything between calls.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from typing import Any

_PLACEHOLDERS: dict[Any, Any] = {str: "<str>", int: 0, float: 0.0, bool: False, list: [], dict: {}}
_SKIPPED = {"runtime", "exec_runtime", "review_runtime"}


def _spec_placeholder(spec: Any) -> Any:
    if isinstance(spec, dict):
        if "type" in spec and not isinstance(spec["type"], dict):
            return _PLACEHOLDERS.get(spec["type"])
        return {k: _spec_placeholder(v) for k, v in spec.items()}
    if isinstance(spec, list):
        return [_spec_placeholder(spec[0])] if spec else []
    return _PLACEHOLDERS.get(spec)


def _type_name(spec: Any) -> str:
    if isinstance(spec, dict):
        return "dict" if "type" not in spec else getattr(spec["type"], "__name__", "object")
    if isinstance(spec, list):
        return "list"
    return getattr(spec, "__name__", str(spec))


def _first_paragraph(fn: Callable[..., Any]) -> str:
    doc = inspect.getdoc(fn) or ""
    return " ".join(doc.split("\n\n", 1)[0].split())


def _entries(options: dict[str, Any]) -> list[tuple[str, str, str, Any, dict[str, Any]]]:
    """(name, kind, description, target, fields) per option; fields name -> type spec."""
    out = []
    for name, handler in options.items():
        if (
            isinstance(handler, tuple)
            and isinstance(handler[0], str)
            and len(handler) == 2
            and (isinstance(handler[1], dict))
        ):
            out.append((name, "schema", handler[0], None, dict(handler[1])))
            continue
        description = None
        if isinstance(handler, tuple):
            handler, description = handler
        if callable(handler):
            params = inspect.signature(handler).parameters
            fields = {
                p: (param.annotation, param.default is inspect.Parameter.empty)
                for p, param in params.items()
                if p not in _SKIPPED
            }
            text = description if description is not None else _first_paragraph(handler)
            out.append((name, "function", text, handler, fields))
        else:
            out.append((name, "value", description or "", handler, {}))
    return out


def _render(entries: list[tuple[str, str, str, Any, dict[str, Any]]]) -> str:
    blocks = []
    for name, kind, description, _, fields in entries:
        specs = {f: (s[0] if kind == "function" else s) for f, s in fields.items()}
        head = f"{name}(" + ", ".join(f"{f}: {_type_name(s)}" for f, s in specs.items()) + ")"
        lines = [head]
        if description:
            lines.append(f"    {description}")
        for f, spec in specs.items():
            line = f"    {f}"
            if isinstance(spec, dict) and "options" in spec:
                line += " (options: " + ", ".join(f'"{v}"' for v in spec["options"]) + ")"
            lines.append(line)
        call: dict[str, Any] = {"call": name}
        if specs:
            call["args"] = {f: _spec_placeholder(s) for f, s in specs.items()}
        lines.append(f"    Call: {json.dumps(call)}")
        blocks.append("\n".join(lines) + "\n\n")
    return "".join(blocks)[:-1]


def _extract(reply: str) -> Any:
    fence = reply.find("```json")
    start = reply.find("{", fence if fence >= 0 else 0)
    while start >= 0:
        try:
            value, _ = json.JSONDecoder().raw_decode(reply, start)
        except ValueError:
            start = reply.find("{", start + 1)
            continue
        if isinstance(value, dict) and "call" in value:
            return value
        start = reply.find("{", start + 1)
    return None


def _check(value: Any, spec: Any, path: str) -> None:
    if isinstance(spec, dict) and "type" in spec and not isinstance(spec["type"], dict):
        _check(value, spec["type"], path)
        if "options" in spec and value not in spec["options"]:
            raise ValueError(f"Field '{path}' must be one of {spec['options']}")
    elif isinstance(spec, dict):
        if not isinstance(value, dict):
            raise ValueError(f"Field '{path}' must be an object")
        for key, sub in spec.items():
            if key not in value:
                raise ValueError(f"Field '{path}' is missing nested field '{key}'")
            _check(value[key], sub, f"{path}.{key}")
    elif isinstance(spec, list):
        if not isinstance(value, list):
            raise ValueError(f"Field '{path}' must be a list")
        for i, item in enumerate(value):
            _check(item, spec[0], f"{path}[{i}]")
    elif isinstance(spec, type) and spec is not inspect.Parameter.empty:
        if spec is float and isinstance(value, int) and not isinstance(value, bool):
            return
        if not isinstance(value, spec) or (spec is int and isinstance(value, bool)):
            raise ValueError(f"Field '{path}' must be {spec.__name__}")


def reference_make(prompt: str, options: dict[str, Any], model: Callable[[str], str]) -> Any:
    """The reference's per-call work (see the module docstring)."""
    entries = _entries(options)
    reply = model(f"{prompt}\n\n{_render(entries)}")
    action = _extract(reply)
    if action is None:
        raise ValueError("no action")
    by_name = {e[0]: e for e in entries}
    name, kind, _, target, fields = by_name[action["call"]]
    args = action.get("args") or {}
    if kind == "function":
        missing = [f for f, (_, required) in fields.items() if required and f not in args]
        if missing:
            raise ValueError(f"Call '{name}' is missing required arguments: {missing}")
        for f, (annotation, _) in fields.items():
            if f in args:
                _check(args[f], annotation, f)
        return target(**{f: args[f] for f in fields if f in args})
    if kind == "schema":
        for f, spec in fields.items():
            if f not in args:
                raise ValueError(f"Option '{name}' is missing required fields: [{f!r}]")
            _check(args[f], spec, f)
        return {"decision": name, **{f: args[f] for f in fields}}
    return target


def minimal_make(prompt: str, options: dict[str, Any], model: Callable[[str], str]) -> Any:
    """A hand-written minimal decision: render, parse, look up, call."""
    lines = []
    for name, handler in options.items():
        target = handler[0] if isinstance(handler, tuple) else handler
        if callable(target):
            params = [p for p in inspect.signature(target).parameters if p not in _SKIPPED]
        elif isinstance(handler, tuple) and isinstance(handler[1], dict):
            params = list(handler[1])
        else:
            params = []
        call = {"call": name, "args": dict.fromkeys(params)} if params else {"call": name}
        lines.append(f"{name}({', '.join(params)})\n    Call: {json.dumps(call)}\n")
    reply = model(f"{prompt}\n\n" + "\n".join(lines))
    start = reply.rfind("```json")
    action = json.loads(reply[start + 7 : reply.index("```", start + 7)])
    handler = options[action["call"]]
    target = handler[0] if isinstance(handler, tuple) else handler
    if callable(target):
        return target(**(action.get("args") or {}))
    if isinstance(handler, tuple) and isinstance(handler[1], dict):
        return {"decision": action["call"], **action["args"]}
    return target
