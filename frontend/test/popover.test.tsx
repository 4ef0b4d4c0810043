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
});
