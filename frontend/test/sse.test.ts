// @vitest-environment node
import { describe, expect, it, vi } from "vitest";
import { openRunStream, SseParser, type ConnectionState } from "../src/sse";
import type { Packet } from "../src/types";

describe("SseParser", () => {
  it("parses events split across chunks, with CRLF, comments and multi-line data", () => {
    const p = new SseParser();
    const got = [
      ...p.push(": heartbeat\r\n\r\nevent: packet\r\nid: 0\r\ndata: {\"a\":"),
      ...p.push("1}\r\n\r"),
      ...p.push("\nevent: packet\nid: 1\ndata: line1\ndata: line2\n\n"),
      ...p.push("retry: 2500\nid: 2\n\n"),
      ...p.push("data:nospace\n\n"),
    ];
    expect(got.map(({ event, data }) => ({ event, data }))).toEqual([
      { event: "packet", data: '{"a":1}' },
      { event: "packet", data: "line1\nline2" },
      { event: "message", data: "nospace" },
    ]);
    expect(got.slice(0, 2).map((e) => e.id)).toEqual(["0", "1"]);
    expect(p.retry).toBe(2500);
  });
});

function packet(seq: number, type = "plan_delta"): Packet {
  return {
    seq,
    run_id: "r",
    placement: { turn_index: 0, tab_index: 0, sub_turn_index: null },
    obj: (type === "stop" ? { type, reason: "completed" } : { type, content: String(seq) }) as Packet["obj"],
  };
}

function sse(packets: Packet[]): string {
  return packets.map((p) => `event: packet\nid: ${p.seq}\ndata: ${JSON.stringify(p)}\n\n`).join("");
}

function streamResponse(body: string, status = 200): Response {
  const enc = new TextEncoder();
  const stream = new ReadableStream<Uint8Array>({
    start(c) {
      // Deliver in small pieces to exercise the incremental parser.
      for (let i = 0; i < body.length; i += 17) c.enqueue(enc.encode(body.slice(i, i + 17)));
      c.close();
    },
  });
  return new Response(stream, { status, headers: { "content-type": "text/event-stream" } });
}

describe("openRunStream", () => {
  it("resumes with Last-Event-ID after a dropped connection and stops at `stop`", async () => {
    const calls: (string | null)[] = [];
    const responses = [
      () => streamResponse(sse([packet(0), packet(1), packet(2)])), // drops before stop
      () => {
        throw new TypeError("network down");
      },
      () => streamResponse(sse([packet(2), packet(3), packet(4, "stop")])), // server re-sends 2
    ];
    const fetchImpl = (async (_url: string, init?: RequestInit) => {
      const h = new Headers(init?.headers);
      calls.push(h.get("Last-Event-ID"));
      return responses[calls.length - 1]();
    }) as unknown as typeof fetch;
    const seen: number[] = [];
    const states: ConnectionState[] = [];
    const s = openRunStream({ runId: "r", fetchImpl, baseDelayMs: 1, onPacket: (p) => seen.push(p.seq), onState: (st) => states.push(st) });
    expect(await s.done).toBe("closed");
    expect(calls).toEqual([null, "2", "2"]);
    // Duplicates are passed through; the reducer drops them by seq.
    expect(seen).toEqual([0, 1, 2, 2, 3, 4]);
    expect(states).toContain("reconnecting");
    expect(states[states.length - 1]).toBe("closed");
  });

  it("sends the given lastSeq on the first request", async () => {
    let header: string | null = "unset";
    const fetchImpl = (async (_u: string, init?: RequestInit) => {
      header = new Headers(init?.headers).get("Last-Event-ID");
      return streamResponse(sse([packet(8, "stop")]));
    }) as unknown as typeof fetch;
    await openRunStream({ runId: "r", lastSeq: 7, fetchImpl, onPacket: () => undefined }).done;
    expect(header).toBe("7");
  });

  it("gives up on 404", async () => {
    let n = 0;
    const fetchImpl = (async () => {
      n++;
      return new Response("no", { status: 404 });
    }) as unknown as typeof fetch;
    const states: ConnectionState[] = [];
    expect(await openRunStream({ runId: "r", fetchImpl, onPacket: () => undefined, onState: (s) => states.push(s) }).done).toBe("failed");
    expect(n).toBe(1);
    expect(states).toEqual(["connecting", "failed"]);
  });

  it("close() stops reconnecting", async () => {
    // Fake timers: the backoff waits on the test's clock, so "it retried" and "nothing after
    // close" hold however slowly a loaded machine runs the real ones.
    vi.useFakeTimers();
    try {
      let n = 0;
      const fetchImpl = (async () => {
        n++;
        return new Response("oops", { status: 503 });
      }) as unknown as typeof fetch;
      const s = openRunStream({ runId: "r", fetchImpl, baseDelayMs: 5, onPacket: () => undefined });
      while (n < 2) await vi.advanceTimersByTimeAsync(1); // through the first backoff: it reconnects
      s.close();
      expect(await s.done).toBe("closed");
      const after = n;
      await vi.advanceTimersByTimeAsync(60_000); // longer than any backoff it could still be waiting
      expect(n).toBe(after);
    } finally {
      vi.useRealTimers();
    }
  });
});
