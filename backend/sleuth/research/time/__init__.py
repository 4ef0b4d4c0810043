"""A run's time: the deadline cascade and the waits that enforce it."""
