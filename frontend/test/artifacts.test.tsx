import { render } from "preact";
import { act } from "preact/test-utils";
import { describe, expect, it } from "vitest";
import { makingLabel } from "../src/components/AudioPlayer";
import { planAnswerFor } from "../src/components/PlanReview";
import { ReportHeader } from "../src/components/ReportHeader";
import type { VerifiedReport } from "../src/timeline/state";
import { testRoot } from "./dom";

const root = testRoot();

describe("planAnswerFor", () => {
  it("approves when the steps are unchanged (numbering and spaces aside)", () => {
    expect(planAnswerFor(["1. a", "b"], [" a", "b "])).toEqual({ approve: true });
  });
  it("sends the edited steps, blanks dropped, in their new order", () => {
    expect(planAnswerFor(["a", "b"], ["b", "", "a", "c"])).toEqual({ steps: ["b", "a", "c"] });
  });
});

describe("ReportHeader", () => {
  const report: VerifiedReport = {
    reportId: "r",
    title: "Descriptors <b>win</b>",
    summary: "They take precedence.",
    keyFindings: [{ text: "Data descriptors win.", citations: [1, 2] }],
    method: null,
    markdown: "",
    sources: [],
    removed: [],
    unsupported: [],
  };
  it("shows title, summary and findings as text with one chip per citation", () => {
    act(() => render(<ReportHeader report={report} titleOf={(n) => (n === 1 ? "Attribute access" : undefined)} />, root));
    expect(root.querySelector(".report-title")?.textContent).toBe("Descriptors <b>win</b>"); // text, never markup
    expect(root.querySelector("b")).toBeNull();
    expect(root.querySelector(".report-summary")?.textContent).toBe("They take precedence.");
    const chips = [...root.querySelectorAll(".key-findings .cite-chip")];
    expect(chips.map((c) => (c as HTMLElement).dataset.cite)).toEqual(["1", "2"]);
    expect(chips[0].getAttribute("aria-label")).toBe("Source 1: Attribute access");
  });
  it("shows code spans and emphasis in the summary and findings as markup, and nothing unsafe", () => {
    const marked = {
      ...report,
      summary: "Then `object.__getattribute__()` runs <img src=x onerror=alert(1)>.",
      keyFindings: [{ text: "Defined by *`__slots__`*; see [docs](javascript:alert(1)).", citations: [3] }],
    };
    act(() => render(<ReportHeader report={marked} titleOf={() => undefined} />, root));
    expect(root.querySelector(".report-summary code")?.textContent).toBe("object.__getattribute__()");
    expect(root.querySelector(".report-summary")?.textContent).toBe("Then object.__getattribute__() runs .");
    expect(root.querySelector(".key-findings li em code")?.textContent).toBe("__slots__");
    expect(root.querySelector("img")).toBeNull();
    expect(root.querySelector(".key-findings a")?.getAttribute("href")).toBeNull();
    expect(root.querySelector(".key-findings li .cite-chip")?.textContent).toBe("3");
  });
  it("renders nothing for a report without artifact fields", () => {
    act(() => render(<ReportHeader report={{ ...report, title: "", summary: "", keyFindings: [] }} titleOf={() => undefined} />, root));
    expect(root.innerHTML).toBe("");
  });
});

describe("makingLabel", () => {
  it("says which stage the audio job is in, and how far the speech is", () => {
    expect(makingLabel(null)).toBe("Making audio…");
    expect(makingLabel({ stage: "script", done: 0, total: 0 })).toBe("Writing the script…");
    expect(makingLabel({ stage: "speech", done: 3, total: 12 })).toBe("Speaking line 3 of 12…");
  });
});
