import { render } from "preact";
import { act } from "preact/test-utils";
import { describe, expect, it, vi } from "vitest";
import type { SessionSummary } from "../src/api";
import { Sidebar } from "../src/components/Sidebar";
import { historyEntries, UNTITLED, VISIBLE_CHARS } from "../src/history";
import { testRoot } from "./dom";

const LOOKUP = "How does Python decide where an attribute lookup like obj.x finds its value?";
const LOOKUP_CUT = "How does Python decide where an attribute lookup like obj.x finds its value whe…";

function session(id: string, title: string, createdAt: string | null = null): SessionSummary {
  return { id, title, createdAt, updatedAt: createdAt };
}

describe("historyEntries", () => {
  it("numbers equal titles by age, oldest unnumbered, whatever the list's order", () => {
    const entries = historyEntries([
      session("c", "Generators", "2026-01-03T10:00:00Z"),
      session("x", "Something else", "2026-01-02T10:00:00Z"),
      session("b", "generators ", "2026-01-02T09:00:00Z"),
      session("a", "Generators", "2026-01-01T10:00:00Z"),
    ]);
    expect(entries.map((e) => [e.session.id, e.title, e.repeat])).toEqual([
      ["c", "Generators", 3],
      ["x", "Something else", null],
      ["b", "generators", 2],
      ["a", "Generators", null],
    ]);
  });

  it("cuts long titles that part past what two lines show to their first words and where they part", () => {
    const entries = historyEntries([session("1", LOOKUP), session("2", LOOKUP_CUT), session("3", "What is the difference between is and ==?")]);
    const [a, b, c] = entries.map((e) => e.title);
    expect(a).toBe("How does Python … finds its value?");
    expect(b).toBe("How does Python … finds its value whe…");
    expect(c).toBe("What is the difference between is and ==?");
    for (const t of [a, b]) expect(t.length).toBeLessThanOrEqual(VISIBLE_CHARS);
  });

  it("keeps whole a title that fits, and one that parts from the others where it shows", () => {
    const short = "How does Python decide where attributes are found?";
    const early = "How does Python decide on the method resolution order when classes use multiple inheritance?";
    const entries = historyEntries([session("1", short), session("2", LOOKUP), session("3", early), session("4", "")]);
    expect(entries.map((e) => e.title)).toEqual([short, LOOKUP, early, UNTITLED]);
  });
});

describe("Sidebar", () => {
  const root = testRoot();

  it("gives every entry distinct text and keyboard-reachable rename and delete with distinct names", async () => {
    const onRename = vi.fn(() => Promise.resolve());
    const sessions = [
      session("s3", LOOKUP, "2026-01-01T10:02:00Z"),
      session("s2", LOOKUP, "2026-01-01T10:01:00Z"),
      session("s1", LOOKUP_CUT, "2026-01-01T10:00:00Z"),
    ];
    act(() => render(<Sidebar sessions={sessions} currentId={null} error={null} onNew={() => {}} onSelect={() => {}} onRename={onRename} />, root));
    const links = [...root.querySelectorAll<HTMLAnchorElement>(".session-list a")];
    expect(new Set(links.map((a) => a.textContent)).size).toBe(3);
    const renames = [...root.querySelectorAll<HTMLButtonElement>("button[aria-label^='Rename']")];
    expect(new Set(renames.map((b) => b.getAttribute("aria-label"))).size).toBe(3);
    expect(renames.every((b) => b.tabIndex === 0 && !b.hidden)).toBe(true);

    // Rename from the keyboard: the field takes the focus, Escape gives it back to the button.
    act(() => renames[0].click());
    const field = root.querySelector<HTMLInputElement>("input[aria-label='Session title']")!;
    expect(document.activeElement).toBe(field);
    act(() => {
      field.dispatchEvent(new KeyboardEvent("keydown", { key: "Escape", bubbles: true }));
    });
    expect(root.querySelector("input[aria-label='Session title']")).toBeNull();
    expect(document.activeElement?.getAttribute("aria-label")).toBe(renames[0].getAttribute("aria-label"));
    expect(onRename).not.toHaveBeenCalled();

    // Delete asks first, with the focus on "Keep"; Escape keeps the session.
    act(() => root.querySelector<HTMLButtonElement>("button[aria-label^='Delete']")!.click());
    const confirm = root.querySelector("[role=group]")!;
    expect(confirm.getAttribute("aria-label")).toMatch(/^Delete How does Python … finds its value\? \(#2\)\?$/);
    expect(document.activeElement?.textContent).toBe("Keep");
    act(() => {
      document.activeElement!.dispatchEvent(new KeyboardEvent("keydown", { key: "Escape", bubbles: true }));
    });
    expect(root.querySelector("[role=group]")).toBeNull();
    expect(document.activeElement?.getAttribute("aria-label")).toMatch(/^Delete /);
  });
});
