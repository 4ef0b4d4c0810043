"""`python -m sleuth` is the `sleuth` command."""

from sleuth.cli.main import run

run()
