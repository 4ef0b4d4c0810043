"""The `sleuth` command: the click group and one module per command group."""
