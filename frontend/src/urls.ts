// How a document's URL is shown: web pages link out; local corpus documents and tools' results do not.

export interface UrlView {
  /** Short label: the web host, or the corpus collection. */
  domain: string;
  /** Only http(s) URLs are ever put in an href. */
  href: string | null;
  local: boolean;
  /** What an MCP server's tool returned (`mcp://<server>/…`): the server stands in for the domain. */
  tool: boolean;
}

export function safeHref(url: string | null | undefined): string | null {
  if (!url) return null;
  try {
    const u = new URL(url);
    return u.protocol === "http:" || u.protocol === "https:" ? u.href : null;
  } catch {
    return null;
  }
}

/** A tool's result (`mcp://<server>/<tool>?args=…`): it opens from the run that read it, never the web. */
export function isMcpUrl(url: string | null | undefined): boolean {
  return /^mcp:\/\//i.test((url ?? "").trim());
}

export function describeUrl(url: string | null | undefined): UrlView {
  const raw = (url ?? "").trim();
  const href = safeHref(raw);
  if (href) {
    const host = new URL(href).hostname.replace(/^www\./, "");
    return { domain: host, href, local: false, tool: false };
  }
  // corpus://<collection>/<path>: the collection stands in for the domain; mcp://<server>/<tool>: the server.
  const m = /^([a-z][a-z0-9+.-]*):\/\/([^/?#]*)/i.exec(raw);
  const tool = isMcpUrl(raw);
  if (m) return { domain: m[2] || m[1], href: null, local: !tool, tool };
  return { domain: raw ? raw.slice(0, 40) : "", href: null, local: true, tool: false };
}
