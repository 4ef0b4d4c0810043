"""Sleuth as an MCP server: its tools and report resources, over stdio (`sleuth mcp serve`) and
streamable HTTP (`/mcp` on `sleuth serve`)."""
