"""The research engine: clarify, plan, orchestrate parallel agents, report, verify citations."""
