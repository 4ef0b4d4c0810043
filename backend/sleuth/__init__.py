"""Sleuth: deep research with parallel isolated agents and verified citations."""
