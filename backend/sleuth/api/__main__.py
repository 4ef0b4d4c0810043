"""`python -m sleuth.api` is `sleuth serve` (handy where the console script is not on PATH)."""

from sleuth.api.commands import serve

serve()
