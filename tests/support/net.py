"""A free TCP port on 127.0.0.1 (shared with the benchmarks: `sleuth_testkit.net`)."""

from __future__ import annotations

from sleuth_testkit.net import free_port

__all__ = ["free_port"]
