"""`python -m sleuth` is the `sleuth` command."""

from sleuth.cli import run

run()
