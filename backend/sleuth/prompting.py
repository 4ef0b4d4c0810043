"""Renders the prompt templates in `prompts/` (the only place prompt text lives)."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined


def prompts_dir() -> Path:
    """`sleuth/prompts` in an installed wheel, else the repository's top-level `prompts/`."""
    packaged = Path(__file__).resolve().parent / "prompts"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[2] / "prompts"


@cache
def _environment() -> Environment:
    return Environment(
        loader=FileSystemLoader(str(prompts_dir())),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=False,
        autoescape=False,  # prompts are plain text for a model, not HTML
    )


def render(name: str, /, **variables: Any) -> str:
    """Render `prompts/<name>.j2` with `variables`; a missing variable is an error."""
    return _environment().get_template(f"{name}.j2").render(**variables).strip()
