"""Web tools: search providers (SearXNG, Tavily, Brave, DuckDuckGo) and SSRF-safe page fetching."""
