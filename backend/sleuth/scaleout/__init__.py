"""Scale-out: API servers that hold no run state, `sleuth worker` processes that execute runs.

Runs are queued in PostgreSQL (procrastinate), packets travel over Redis Streams, control
(cancel, plan answers) over Redis pub/sub, and run leases, the global run limit and session
locks are Redis keys. Everything here is used only when SLEUTH_REDIS_URL is set.
"""
