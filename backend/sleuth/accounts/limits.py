"""Failed sign-ins: past a number of them within a window, for a user name or a client address,
further attempts are refused (429) until the oldest failure leaves the window."""

from __future__ import annotations

import threading
from collections import deque

from sleuth.core.clock import Clock

MAX_KEYS = 10_000


class LoginLimiter:
    """Counts failures per key (a name, an address) on `clock`; in memory, per server process."""

    def __init__(self, clock: Clock, *, max_failures: int, window_s: float) -> None:
        self._clock = clock
        self._max = max_failures
        self._window = window_s
        self._failures: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def retry_after(self, *keys: str) -> float | None:
        """Seconds until one of `keys` may try again; None when none is held back."""
        now = self._clock.now()
        with self._lock:
            waits = [times[0] + self._window - now for times in map(self._recent, keys) if len(times) >= self._max]
        return max(waits) if waits else None

    def failed(self, *keys: str) -> None:
        now = self._clock.now()
        with self._lock:
            if len(self._failures) >= MAX_KEYS:  # many names or addresses at once: forget the stale ones
                for key in list(self._failures):
                    self._recent(key)
            for key in keys:
                self._recent(key)
                self._failures.setdefault(key, deque()).append(now)

    def succeeded(self, key: str) -> None:
        with self._lock:
            self._failures.pop(key, None)

    def _recent(self, key: str) -> deque[float]:
        """The key's failures within the window; a key with none is forgotten (the map stays small)."""
        times = self._failures.get(key)
        if times is None:
            return deque()
        while times and times[0] <= self._clock.now() - self._window:
            times.popleft()
        if not times:
            del self._failures[key]
        return times
