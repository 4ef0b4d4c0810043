import { afterEach, describe, expect, it, vi } from "vitest";
import { listSessions } from "../src/api";
import { authHeaders, onUnauthorized, setToken } from "../src/auth";
import { openRunStream } from "../src/sse";

afterEach(() => {
  setToken(null);
  vi.unstubAllGlobals();
});

describe("API token", () => {
  it("is sent as a bearer header once stored, and not before", async () => {
    expect(authHeaders()).toEqual({});
    const fetchMock = vi.fn(
      async (_url: string, _init?: RequestInit) => new Response("[]", { status: 200, headers: { "Content-Type": "application/json" } }),
    );
    vi.stubGlobal("fetch", fetchMock);
    setToken("s3cret");
    await listSessions();
    const init = fetchMock.mock.calls[0][1];
    expect((init?.headers as Record<string, string>).Authorization).toBe("Bearer s3cret");
  });

  it("a 401 from the API asks for a token", async () => {
    vi.stubGlobal("fetch", vi.fn(async () => new Response('{"detail":"missing token"}', { status: 401 })));
    const asked = vi.fn();
    const stop = onUnauthorized(asked);
    await expect(listSessions()).rejects.toThrow("missing token");
    stop();
    expect(asked).toHaveBeenCalledTimes(1);
  });

  it("a 401 on the event stream asks for a token and does not retry forever", async () => {
    const fetchImpl = vi.fn(async (_url: string | URL | Request, _init?: RequestInit) => new Response("", { status: 401 }));
    const asked = vi.fn();
    const stop = onUnauthorized(asked);
    setToken("old");
    const stream = openRunStream({ runId: "r1", onPacket: () => undefined, fetchImpl });
    await stream.done;
    stop();
    expect(asked).toHaveBeenCalledTimes(1);
    expect(fetchImpl).toHaveBeenCalledTimes(1);
    const init = fetchImpl.mock.calls[0][1];
    expect((init?.headers as Record<string, string>).Authorization).toBe("Bearer old");
  });
});
