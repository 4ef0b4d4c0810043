"""Executing runs: admission, engine processes, local runs, the server's run manager."""
