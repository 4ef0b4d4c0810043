"""Packets, their placement, and the one emitter per run."""
