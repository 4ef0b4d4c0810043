// The server warming up: /api/health polled until ready, and the notice by the ask box meanwhile.

import { render } from "preact";
import { act } from "preact/test-utils";
import { afterEach, describe, expect, it, vi } from "vitest";
import { Composer } from "../src/components/Composer";
import { pollReadiness, POLL_MS, warmupText, type Readiness } from "../src/warmup";
import { testRoot } from "./dom";

const root = testRoot();

const warming = (enginesReady: number, engines = 2): Readiness => ({ ready: false, engines, enginesReady });
const READY: Readiness = { ready: true, engines: 2, enginesReady: 2 };

describe("warmupText", () => {
  it("says the server warms up, with its engines, only while it is not ready", () => {
    expect(warmupText(null)).toBeNull(); // no answer yet: nothing flashes on a ready server
    expect(warmupText(READY)).toBeNull();
    expect(warmupText(warming(1))).toBe(
      "Sleuth is warming up (1 of 2 research engines ready). You can ask now: the research starts as soon as it is ready.",
    );
    // Scaled out: no engines of its own, so no count.
    expect(warmupText(warming(0, 0))).toMatch(/^Sleuth is warming up\. You can ask now/);
  });
});

describe("pollReadiness", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("asks until ready, through a failed request, then stops asking", async () => {
    vi.useFakeTimers();
    const answers: Array<Readiness | Error> = [warming(0), new Error("connection refused"), warming(1), READY];
    const get = vi.fn(async () => {
      const next = answers.shift()!;
      if (next instanceof Error) throw next;
      return next;
    });
    const seen: Readiness[] = [];
    pollReadiness(get, (r) => seen.push(r));
    await vi.advanceTimersByTimeAsync(0);
    expect(seen).toEqual([warming(0)]);
    await vi.advanceTimersByTimeAsync(POLL_MS);
    expect(get).toHaveBeenCalledTimes(2);
    expect(seen).toEqual([warming(0)]); // the failure changes nothing shown
    await vi.advanceTimersByTimeAsync(2 * POLL_MS);
    expect(seen).toEqual([warming(0), warming(1), READY]);
    await vi.advanceTimersByTimeAsync(10 * POLL_MS);
    expect(get).toHaveBeenCalledTimes(4); // ready: no more polling
  });

  it("stops when asked to, with an answer still on its way", async () => {
    vi.useFakeTimers();
    const get = vi.fn(async () => warming(0));
    const seen: Readiness[] = [];
    const stop = pollReadiness(get, (r) => seen.push(r));
    stop();
    await vi.advanceTimersByTimeAsync(5 * POLL_MS);
    expect(seen).toEqual([]);
    expect(get).toHaveBeenCalledTimes(1);
  });
});

describe("the composer while the server warms up", () => {
  it("shows why a question waits, lets it be sent, and says it is waiting", async () => {
    let release = () => {};
    const onSend = vi.fn(() => new Promise<void>((resolve) => (release = resolve)));
    const waiting = warmupText(warming(0));
    act(() => render(<Composer busy={false} placeholder="Ask" onSend={onSend} onStop={null} waiting={waiting} />, root));
    const notice = root.querySelector(".warmup[role=status]");
    expect(notice?.textContent).toContain("Sleuth is warming up (0 of 2 research engines ready)");
    const box = root.querySelector<HTMLTextAreaElement>("#composer-input")!;
    expect(box.disabled).toBe(false);
    act(() => {
      box.value = "What is a descriptor?";
      box.dispatchEvent(new Event("input", { bubbles: true }));
    });
    await act(async () => {
      box.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", bubbles: true, cancelable: true }));
    });
    expect(onSend).toHaveBeenCalledOnce();
    expect(root.querySelector("button[type=submit]")?.textContent).toBe("Waiting for the engines…");
    await act(async () => release());

    act(() => render(<Composer busy={false} placeholder="Ask" onSend={onSend} onStop={null} waiting={null} />, root));
    expect(root.querySelector(".warmup")).toBeNull();
  });
});
