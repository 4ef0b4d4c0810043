"""Every Redis key and channel name, in one place, under the configured prefix."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RedisKeys:
    prefix: str

    def packets(self, run_id: str) -> str:
        """The run's live packet stream."""
        return f"{self.prefix}:run:{run_id}:packets"

    def run_of_packets(self, key: str) -> str:
        """The run id in a `packets` key."""
        return key[len(f"{self.prefix}:run:") : -len(":packets")]

    def wake(self, reader: str) -> str:
        """A stream an API server's packet reader also reads, so that a new run can interrupt its wait."""
        return f"{self.prefix}:wake:{reader}"

    def lease(self, run_id: str) -> str:
        """Held (with a TTL) by the worker executing the run."""
        head, tail = self.lease_affixes
        return f"{head}{run_id}{tail}"

    @property
    def lease_affixes(self) -> tuple[str, str]:
        """A lease key is head + id + tail: for a script that looks up the leases of a set's members."""
        return f"{self.prefix}:run:", ":lease"

    def cancel(self, run_id: str) -> str:
        """Set when a cancel was asked, for a worker that takes the run after the request went out."""
        return f"{self.prefix}:run:{run_id}:cancel"

    def plan_answer(self, run_id: str, review_seq: int) -> str:
        """Claimed by the first answer to the plan review at `review_seq`."""
        return f"{self.prefix}:run:{run_id}:plan:{review_seq}"

    def for_audio(self) -> RedisKeys:
        """The same names under `<prefix>:audio`: audio jobs are leased like runs, in their own space."""
        return RedisKeys(f"{self.prefix}:audio")

    @property
    def model_problem(self) -> str:
        """The model check of the worker that got ready last: "" when the models can be called, else why not."""
        return f"{self.prefix}:models"

    @property
    def mcp_states(self) -> str:
        """The MCP servers of the worker that spoke last, as JSON (`tools/mcp/hub.py` `states_json`)."""
        return f"{self.prefix}:mcp"

    @property
    def claimed(self) -> str:
        """Set of runs a worker has taken and not yet ended: what the reaper checks leases of."""
        return f"{self.prefix}:claimed"

    @property
    def active(self) -> str:
        """Hash run id -> session id of every run counted against the global limit."""
        return f"{self.prefix}:active"

    def session(self, session_id: str) -> str:
        """The run in progress in a session (one at a time, across servers)."""
        return f"{self.prefix}:session:{session_id}"

    @property
    def control(self) -> str:
        """Pub/sub channel of cancels and plan answers, heard by every worker."""
        return f"{self.prefix}:control"
