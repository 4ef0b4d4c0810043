"""The research lanes: the orchestrator, parallel agents, their turns and excerpts."""
