"""Sleuth: deep research with parallel isolated agents and verified citations."""

__version__ = "0.1.0"
