"""The `sleuth` command line."""

from __future__ import annotations

import click

from sleuth import __version__


@click.group()
@click.version_option(__version__, prog_name="sleuth")
def main() -> None:
    """Sleuth: deep research with parallel agents and verified citations."""


def _register_optional_commands() -> None:
    # Commands owned by other packages register here so this file stays the one entry point.
    from sleuth.cli_doctor import doctor
    from sleuth.cli_eval import eval_command
    from sleuth.cli_research import research, schema
    from sleuth.cli_sources import show, sources

    main.add_command(research)
    main.add_command(schema)
    main.add_command(doctor)
    main.add_command(eval_command)
    main.add_command(sources)
    main.add_command(show)
    try:
        from sleuth.tools.local.commands import index
    except ImportError:
        pass
    else:
        main.add_command(index)
    try:
        from sleuth.api.commands import serve
    except ImportError:
        pass
    else:
        main.add_command(serve)


_register_optional_commands()
