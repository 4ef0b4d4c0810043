import { render } from "preact";
import { act } from "preact/test-utils";
import { afterEach, describe, expect, it, vi } from "vitest";
import { SourcePicker } from "../src/components/SourcePicker";
import { testRoot } from "./dom";

const root = testRoot();
const SOURCES = [{ name: "python-reference", kind: "local", documents: 79, default: true }];

async function showPicker() {
  vi.stubGlobal("fetch", vi.fn(async () => new Response(JSON.stringify(SOURCES), { status: 200 })));
  await act(async () => {
    render(<SourcePicker chosen={null} onChange={() => {}} disabled={false} />, root);
  });
  await vi.waitFor(() => expect(root.querySelector("input[type=checkbox]")).not.toBeNull());
  const picker = root.querySelector<HTMLDetailsElement>("details.source-picker")!;
  const summary = picker.querySelector("summary")!;
  return { picker, summary };
}

describe("the Search in popover", () => {
  afterEach(() => vi.unstubAllGlobals());

  it("closes on Escape, with the focus back on its button", async () => {
    const { picker, summary } = await showPicker();
    act(() => summary.click());
    expect(picker.open).toBe(true);
    picker.querySelector<HTMLInputElement>("input[type=checkbox]")!.focus();
    act(() => {
      document.activeElement!.dispatchEvent(new KeyboardEvent("keydown", { key: "Escape", bubbles: true }));
    });
    expect(picker.open).toBe(false);
    expect(document.activeElement).toBe(summary);
  });

  it("closes on a press outside it and stays open on a press inside", async () => {
    const { picker, summary } = await showPicker();
    act(() => summary.click());
    picker.querySelector(".source-picker-menu")!.dispatchEvent(new Event("pointerdown", { bubbles: true }));
    expect(picker.open).toBe(true);
    document.body.dispatchEvent(new Event("pointerdown", { bubbles: true }));
    expect(picker.open).toBe(false);
  });

  it("asks again while open until a starting MCP server has started, and no more once closed", async () => {
    const mcp = (state: string, tools: number | null) => ({ name: "fixture", kind: "mcp", default: true, state, tools });
    const answers = [[mcp("starting", null)], [mcp("starting", null)], [mcp("starting", null)], [mcp("ready", 7)]];
    const fetch = vi.fn(async () => new Response(JSON.stringify(answers.shift() ?? [mcp("ready", 7)]), { status: 200 }));
    vi.stubGlobal("fetch", fetch);
    vi.useFakeTimers();
    try {
      await act(async () => {
        render(<SourcePicker chosen={null} onChange={() => {}} disabled={false} />, root);
      });
      await act(async () => {
        await vi.advanceTimersByTimeAsync(5000);
      });
      expect(fetch).toHaveBeenCalledTimes(1); // closed: nobody is looking, nothing is asked again
      const picker = root.querySelector<HTMLDetailsElement>("details.source-picker")!;
      await act(async () => {
        picker.open = true;
        picker.dispatchEvent(new Event("toggle"));
      });
      await act(async () => {
        await vi.advanceTimersByTimeAsync(2500);
      });
      expect(root.querySelector(".source-option")!.textContent).toContain("MCP: 7 tools");
      const asked = fetch.mock.calls.length;
      await act(async () => {
        await vi.advanceTimersByTimeAsync(5000);
      });
      expect(fetch).toHaveBeenCalledTimes(asked); // started: no more asking
    } finally {
      vi.useRealTimers();
    }
  });
});

