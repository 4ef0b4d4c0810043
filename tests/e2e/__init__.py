"""Browser end-to-end tests (a package, so its conftest does not shadow tests/api/conftest.py)."""
