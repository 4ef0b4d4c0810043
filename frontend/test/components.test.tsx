import { render } from "preact";
import { act } from "preact/test-utils";
import { describe, expect, it, vi } from "vitest";
import { combineAnswers } from "../src/components/Clarification";
import { Composer } from "../src/components/Composer";
import { RunView } from "../src/components/RunView";
import { reportFile } from "../src/components/Report";
import { SourceTitle } from "../src/components/SourceItem";
import type { RunEntry } from "../src/session";
import { buildThread } from "../src/session";
import { reduceAll } from "../src/timeline/reducer";
import type { Packet, PacketObj } from "../src/types";
import { describeUrl } from "../src/urls";
import { fixture } from "./fixtures";
import { testRoot } from "./dom";

const root = testRoot();

function entry(packets: Packet[]): RunEntry {
  return { state: reduceAll(packets), conn: "closed", connDetail: null, startedAt: Date.now() };
}

function show(e: RunEntry, onAnswer: ((t: string) => Promise<void>) | null = null) {
  act(() => render(<RunView entry={e} onAnswer={onAnswer} />, root));
}

describe("RunView on the happy fixture", () => {
  it("shows plan steps ticked, lanes, the verified report with chips, sources and summary", () => {
    show(entry(fixture("happy-3-lanes-2-cycles")));
    expect(root.querySelectorAll(".plan-step.done")).toHaveLength(3);
    expect(root.querySelectorAll(".lane")).toHaveLength(3);
    expect(root.querySelectorAll(".lanes-block")).toHaveLength(2);
    expect(root.querySelectorAll(".lane .badge-done")).toHaveLength(3);
    expect(root.querySelector(".report-state")?.textContent).toContain("Verified report");
    const chips = root.querySelectorAll(".report-body .cite-chip");
    expect(chips.length).toBeGreaterThanOrEqual(5);
    expect(root.querySelector(".report-body")?.textContent).not.toContain("unverified claim");
    expect(root.querySelectorAll(".sources-panel .sources-list > li[data-source]")).toHaveLength(4);
    expect(root.querySelector(".summary-bar")?.textContent).toContain("4 cited");
    expect(root.querySelector(".progress-line")?.textContent).toContain("offline (extractive)");
  });

  it("links only http(s) sources, in a new tab without referrer; corpus sources are plain text", () => {
    show(entry(fixture("happy-3-lanes-2-cycles")));
    const links = Array.from(root.querySelectorAll("a"));
    expect(links.length).toBeGreaterThan(0);
    for (const a of links) {
      expect(a.getAttribute("href")).toMatch(/^https?:\/\//);
      expect(a.getAttribute("target")).toBe("_blank");
      expect(a.getAttribute("rel")).toBe("noopener noreferrer");
    }
    expect(root.innerHTML).not.toContain('href="corpus:');
    expect(root.textContent).toContain("python-reference");
  });

  it("a chip click highlights its source in the panel; hover shows title, domain, snippet", () => {
    show(entry(fixture("happy-3-lanes-2-cycles")));
    const chip = root.querySelector<HTMLButtonElement>('.report-body .cite-chip[data-cite="3"]')!;
    act(() => {
      chip.dispatchEvent(new MouseEvent("mouseover", { bubbles: true }));
    });
    const card = root.querySelector(".source-card");
    expect(card?.textContent).toContain("Implementing Descriptors");
    expect(card?.textContent).toContain("python-reference");
    expect(card?.textContent).toContain("descriptor class");
    act(() => chip.click());
    const active = root.querySelector(".sources-list li.active");
    expect(active?.getAttribute("data-source")).toBe("3");
    expect(active?.getAttribute("aria-current")).toBe("true");
  });
});

describe("unsupported claims", () => {
  function withUnsupportedClaim(): Packet[] {
    return fixture("happy-3-lanes-2-cycles").map((p) => {
      if (p.obj.type === "report") {
        const claim = { marker: "[3]", occurrence: 2, sentence: "Then non-data descriptors and class attributes.", reason: "the source shares only 20% of the key words" };
        return { ...p, obj: { ...p.obj, unsupported_claims: [claim] } };
      }
      if (p.obj.type === "summary") return { ...p, obj: { ...p.obj, claims_checked: 5, claims_unsupported: 1 } };
      return p;
    });
  }

  it("marks exactly the flagged chip, with the reason on hover, and lists the claim", () => {
    show(entry(withUnsupportedClaim()));
    const threes = Array.from(root.querySelectorAll<HTMLButtonElement>('.report-body .cite-chip[data-cite="3"]'));
    expect(threes).toHaveLength(2);
    expect(threes.map((c) => c.classList.contains("unsupported"))).toEqual([false, true]);
    expect(root.querySelectorAll(".report-body .cite-chip.unsupported")).toHaveLength(1);
    expect(threes[1].title).toContain("the source shares only 20% of the key words");
    expect(threes[1].getAttribute("aria-label")).toContain("may not support this sentence");
    act(() => {
      threes[1].dispatchEvent(new MouseEvent("mouseover", { bubbles: true }));
    });
    expect(root.querySelector(".source-card-flag")?.textContent).toContain("20% of the key words");
    act(() => {
      threes[1].dispatchEvent(new MouseEvent("mouseout", { bubbles: true }));
      threes[0].dispatchEvent(new MouseEvent("mouseover", { bubbles: true }));
    });
    expect(root.querySelector(".source-card")).not.toBeNull();
    expect(root.querySelector(".source-card-flag")).toBeNull();
    const list = root.querySelector(".unsupported-claims");
    expect(list?.textContent).toContain("1 claim may not be supported");
    expect(list?.textContent).toContain("Then non-data descriptors and class attributes.");
    expect(root.querySelector(".summary-bar")?.textContent).toContain("5 checked · 1 unsupported");
  });

  it("a report without unsupported claims has no marks", () => {
    show(entry(fixture("happy-3-lanes-2-cycles")));
    expect(root.querySelectorAll(".cite-chip.unsupported, .unsupported-claims")).toHaveLength(0);
  });
});

describe("RunView on failures", () => {
  it("shows failed and timed-out lanes and the notices where they happened", () => {
    show(entry(fixture("failed-and-timed-out")));
    const badges = Array.from(root.querySelectorAll(".lane .badge")).map((b) => b.textContent?.trim());
    expect(badges).toEqual(["✓done", "✕failed", "timed out"]);
    expect(root.querySelectorAll(".plan-step.done")).toHaveLength(1);
    const notices = Array.from(root.querySelectorAll(".turn > .notice")).map((n) => n.textContent);
    expect(notices[0]).toContain("Research stopped early");
    expect(notices[1]).toContain("Report cut short");
  });
});

describe("clarification", () => {
  it("combines per-question answers and free text", () => {
    expect(combineAnswers(["1. Which?", "Why?"], ["this", ""], "more")).toBe("1. Which?\n   this\n\nAlso: more");
    expect(combineAnswers(["Which?"], [""], "just this")).toBe("just this");
    expect(combineAnswers(["Which?"], [""], "  ")).toBe("");
  });

  it("renders a card with a box per question plus a free-text box and submits the answer", async () => {
    const onAnswer = vi.fn(async () => undefined);
    show(entry(fixture("clarification")), onAnswer);
    const boxes = root.querySelectorAll<HTMLTextAreaElement>("form.clarify textarea");
    expect(boxes).toHaveLength(4);
    for (const b of boxes) expect(root.querySelector(`label[for="${b.id}"]`)).not.toBeNull();
    act(() => {
      boxes[0].value = "attribute lookup";
      boxes[0].dispatchEvent(new Event("input", { bubbles: true }));
    });
    await act(async () => {
      root.querySelector("form.clarify")!.dispatchEvent(new Event("submit", { bubbles: true, cancelable: true }));
    });
    expect(onAnswer).toHaveBeenCalledWith(expect.stringContaining("attribute lookup"));
  });

  it("an answered card shows only the questions", () => {
    show(entry(fixture("clarification")), null);
    expect(root.querySelectorAll("textarea")).toHaveLength(0);
    expect(root.querySelectorAll(".clarify-questions li")).toHaveLength(3);
  });
});

describe("untrusted text stays inert in the rendered UI", () => {
  it("model output, web titles and snippets cannot inject markup", () => {
    const evilDoc = {
      id: "d_evil",
      url: "javascript:alert(1)",
      title: '<img src=x onerror="window.__pwned=1">Evil',
      snippet: "<script>window.__pwned=2</script>",
      source: "web",
    };
    let seq = 0;
    const p = (obj: { type: PacketObj["type"] } & Record<string, unknown>, turn = 0, tab = 0, sub: number | null = null): Packet => ({
      seq: seq++,
      run_id: "r",
      placement: { turn_index: turn, tab_index: tab, sub_turn_index: sub },
      obj: obj as PacketObj,
    });
    const md = "Hi <script>window.__pwned=3</script> <img src=x onerror=alert(1)> [x](javascript:alert(1)) [1]";
    const packets = [
      p({ type: "plan_start", content: "<b onmouseover=alert(1)>plan</b>" }),
      p({ type: "top_level_branching", num_parallel_branches: 1 }, 1),
      p({ type: "research_agent_start", task: "<img src=x onerror=alert(1)>" }, 1),
      p({ type: "search_start", provider: "web" }, 1, 0, 0),
      p({ type: "search_queries", queries: ["<script>alert(1)</script>"] }, 1, 0, 0),
      p({ type: "search_documents", documents: [evilDoc] }, 1, 0, 0),
      p({ type: "intermediate_report_start", content: md }, 1),
      p({ type: "message_start", final_documents: [evilDoc] }, 2),
      p({ type: "message_delta", content: md }, 2),
      p({ type: "report", report_id: "r1", markdown: md, sources: [{ ...evilDoc, number: 1 }], removed_citations: [], unsupported_claims: [] }, 2),
      p({ type: "stop", reason: "completed" }, 2),
    ];
    show(entry(packets));
    // Open every collapsible so the lazily shown parts are in the DOM too.
    for (const d of root.querySelectorAll("details")) d.open = true;
    expect(root.querySelectorAll("script, img, iframe")).toHaveLength(0);
    for (const el of root.querySelectorAll("*")) {
      for (const a of Array.from(el.attributes)) {
        expect(a.name.startsWith("on"), `${el.tagName}[${a.name}]`).toBe(false);
        expect(a.value).not.toMatch(/^\s*javascript:/i);
      }
    }
    expect((window as unknown as { __pwned?: number }).__pwned).toBeUndefined();
    // The text is still visible, as text.
    expect(root.textContent).toContain("<img src=x onerror=alert(1)>");
  });
});

describe("composer", () => {
  it("Enter sends, Shift+Enter does not; disabled with a Stop button while busy", async () => {
    const onSend = vi.fn(async () => undefined);
    const onStop = vi.fn();
    act(() => render(<Composer busy={false} placeholder="Ask" onSend={onSend} onStop={null} />, root));
    const box = root.querySelector<HTMLTextAreaElement>("#composer-input")!;
    act(() => {
      box.value = "What is a descriptor?";
      box.dispatchEvent(new Event("input", { bubbles: true }));
    });
    act(() => {
      box.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", shiftKey: true, bubbles: true }));
    });
    expect(onSend).not.toHaveBeenCalled();
    await act(async () => {
      box.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", bubbles: true, cancelable: true }));
    });
    expect(onSend).toHaveBeenCalledWith("What is a descriptor?", "heavy", true, null, false);

    act(() => render(<Composer busy={true} placeholder="Ask" onSend={onSend} onStop={onStop} />, root));
    expect(root.querySelector<HTMLTextAreaElement>("#composer-input")!.disabled).toBe(true);
    const stop = Array.from(root.querySelectorAll("button")).find((b) => b.textContent?.includes("Stop"))!;
    act(() => stop.click());
    expect(onStop).toHaveBeenCalled();
  });
});

describe("helpers", () => {
  it("describes corpus URLs by collection and links only http(s)", () => {
    expect(describeUrl("corpus://python-reference/attribute-access")).toEqual({ domain: "python-reference", href: null, local: true, tool: false });
    expect(describeUrl("https://www.example.org/a?b=1")).toEqual({ domain: "example.org", href: "https://www.example.org/a?b=1", local: false, tool: false });
    expect(describeUrl("mcp://fixture/lookup_notes?args=ab12")).toEqual({ domain: "fixture", href: null, local: false, tool: true });
    expect(describeUrl("javascript:alert(1)").href).toBeNull();
  });

  it("names an MCP result's server, not a local corpus, beside its title", () => {
    act(() => render(<SourceTitle doc={{ url: "mcp://fixture/lookup_notes?args=ab12", title: "fixture · lookup_notes" }} />, root));
    const domain = root.querySelector(".src-domain")?.textContent ?? "";
    expect(domain).toContain("fixture");
    expect(domain).toContain("(MCP server)");
    expect(domain).not.toContain("local corpus");
    expect(root.querySelector(".src-title a")).toBeNull();
  });

  it("builds the thread from a session: each run after its message, unplaced runs last", () => {
    const t = buildThread({
      id: "s",
      title: "",
      createdAt: null,
      updatedAt: null,
      messages: [
        { role: "user", content: "Q1", runId: "r1" },
        { role: "assistant", content: "questions", runId: "r1" },
        { role: "user", content: "A1", runId: "r2" },
      ],
      runs: [
        { id: "r1", status: "waiting_for_input", createdAt: null },
        { id: "r2", status: "completed", createdAt: null },
        { id: "r3", status: "running", createdAt: null },
      ],
    });
    expect(t).toEqual([
      { kind: "user", content: "Q1", runId: "r1" },
      { kind: "user", content: "A1", runId: "r2" },
      { kind: "user", content: "", runId: "r3" },
    ]);
  });

  it("adds a sources list to the download only when the report lacks the URLs", () => {
    const src = [{ id: "a", url: "https://a.org/", title: "A", snippet: "", source: "web", number: 1 }];
    expect(reportFile("Text [1].", src)).toContain("[1] A — https://a.org/");
    expect(reportFile("Text [1].\n\n1. https://a.org/", src)).toBe("Text [1].\n\n1. https://a.org/");
  });
});
