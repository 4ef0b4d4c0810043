"""MCP servers as research tools: their configuration file, the one module that speaks the SDK, the
process's owner of the connections, and what a tool's result becomes in a run."""
