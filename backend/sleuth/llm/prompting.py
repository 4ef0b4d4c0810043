"""Renders the prompt templates in `prompts/` (the only place prompt text lives)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from sleuth.llm.prompt_facts import facts, tagged


def prompts_dir() -> Path:
    """`sleuth/prompts` in an installed wheel, else the repository's top-level `prompts/`."""
    package = Path(__file__).resolve().parents[1]  # sleuth/
    packaged = package / "prompts"
    if packaged.is_dir():
        return packaged
    return package.parents[1] / "prompts"


@cache
def _environment() -> Environment:
    environment = Environment(
        loader=FileSystemLoader(str(prompts_dir())),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=False,
        autoescape=False,  # prompts are plain text for a model, not HTML
    )
    environment.globals["facts"] = facts
    environment.filters["tagged"] = tagged
    return environment


def compile_all() -> None:
    """Compile every template now, off the event loop: a first render compiles its template (and
    its includes), which a run would otherwise pay on its loop mid-step."""
    environment = _environment()
    for name in environment.list_templates(extensions=["j2"]):
        environment.get_template(name)


_observers: list[list[str]] = []


@contextmanager
def observe_renders() -> Iterator[list[str]]:
    """Collect the name of every template rendered inside the block (for coverage checks)."""
    seen: list[str] = []
    _observers.append(seen)
    try:
        yield seen
    finally:
        _observers.remove(seen)


def render(template: str, /, **variables: Any) -> str:
    """Render `prompts/<template>.j2` with `variables`; a missing variable is an error.

    `template` is positional-only so that a template may take a variable called `name`.
    """
    text = _environment().get_template(f"{template}.j2").render(**variables).strip()
    for seen in _observers:
        seen.append(template)
    return text


def tool_schema(
    name: str, properties: dict[str, Any] | None = None, required: list[str] | None = None, **context: Any
) -> dict[str, Any]:
    """A function tool as the model sees it; its description is the prompt `tools/<name>`."""
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": render(f"tools/{name}", **context),
            "parameters": {"type": "object", "properties": properties or {}, "required": required or []},
        },
    }
