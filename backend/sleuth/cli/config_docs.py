"""docs/configuration.md, generated from `Settings`, so the settings reference cannot drift from the code.

python -m sleuth.cli.config_docs [OUT]      (scripts/gen-config-docs; stdout without OUT)
"""

from __future__ import annotations

import sys
import types
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin

import annotated_types
from pydantic import SecretStr
from pydantic.fields import FieldInfo

from sleuth.config import Settings

PREFIX = Settings.model_config.get("env_prefix", "")

INTRO = f"""\
# Configuration

<!-- Generated from sleuth.config.Settings by scripts/gen-config-docs; edit the descriptions there. -->

Every setting is an environment variable with the `{PREFIX}` prefix, or a line of a `.env` file in the
working directory. Every command (`sleuth research`, `serve`, `worker`, `index`, `eval`, …) reads them
the same way. A value that is not valid stops the command with one line that names the setting but
never shows the value (it may be a key), and exit code 1:

```
Error: invalid setting SLEUTH_MAX_PARALLEL_AGENTS: Input should be less than or equal to 3
```

An empty value (`SLEUTH_API_KEY=`) means unset. "Unset" in the table means the setting has no
value unless you give it one; the description says what happens then. Secrets are never logged
or shown, and `sleuth doctor` masks the passwords in URLs.
"""

_TYPE_NAMES: dict[Any, str] = {
    str: "text",
    int: "integer",
    float: "number",
    bool: "`true` or `false`",
    Path: "path",
    SecretStr: "secret",
}


def env_name(name: str) -> str:
    return f"{PREFIX}{name}".upper()


def render(settings: type[Settings] = Settings) -> str:
    """The whole page: the introduction and one table row per setting, in declaration order."""
    rows = ["| setting | type | default | description |", "|---|---|---|---|"]
    for name, field in settings.model_fields.items():
        if not field.description:
            raise ValueError(f"setting {env_name(name)} has no description: give its Field a description")
        cells = (f"`{env_name(name)}`", _type(field), _default(field), " ".join(field.description.split()))
        rows.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    return INTRO + "\n" + "\n".join(rows) + "\n"


def _type(field: FieldInfo) -> str:
    annotation = field.annotation
    if get_origin(annotation) in (Union, types.UnionType):
        annotation = next(arg for arg in get_args(annotation) if arg is not type(None))
    if get_origin(annotation) is Literal:
        text = " or ".join(f"`{value}`" for value in get_args(annotation))
    else:
        text = _TYPE_NAMES.get(annotation, getattr(annotation, "__name__", str(annotation)))
    bounds = _bounds(field.metadata)
    return f"{text}, {bounds}" if bounds else text


def _bounds(metadata: list[Any]) -> str:
    """`1–3`, `> 0`, `≥ 64`, `1–64 characters`: the constraints pydantic enforces on a value."""
    low = high = ""
    low_mark, high_mark = "≥", "≤"
    min_length: int | None = None
    max_length: int | None = None
    for item in metadata:
        if isinstance(item, annotated_types.Gt):
            low, low_mark = _number(item.gt), ">"
        elif isinstance(item, annotated_types.Ge):
            low = _number(item.ge)
        elif isinstance(item, annotated_types.Lt):
            high, high_mark = _number(item.lt), "<"
        elif isinstance(item, annotated_types.Le):
            high = _number(item.le)
        elif isinstance(item, annotated_types.MinLen):
            min_length = item.min_length
        elif isinstance(item, annotated_types.MaxLen):
            max_length = item.max_length
    if min_length is not None and max_length is not None:
        return f"{min_length}–{max_length} characters"
    if min_length is not None or max_length is not None:
        return f"at least {min_length} characters" if max_length is None else f"at most {max_length} characters"
    if low and high and low_mark == "≥" and high_mark == "≤":
        return f"{low}–{high}"
    return ", ".join(part for part in (low and f"{low_mark} {low}", high and f"{high_mark} {high}") if part)


def _default(field: FieldInfo) -> str:
    if field.default_factory is not None:
        return "computed (see description)"
    value = field.default
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if value == "":
        return "empty"
    return f"`{_number(value)}`" if isinstance(value, int | float) else f"`{value}`"


def _number(value: object) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    text = render()
    if args:
        Path(args[0]).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
