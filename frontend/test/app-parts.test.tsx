// The pieces App and ReportView are made of: which run is the latest, the status line, the
// thread's exchanges, and what verification notes under a report.

import { render } from "preact";
import { act } from "preact/test-utils";
import { describe, expect, it, vi } from "vitest";
import { ReportState } from "../src/components/Report";
import { unsupportedByChip } from "../src/components/reportCitations";
import { Thread } from "../src/components/Thread";
import { VerificationNotes } from "../src/components/VerificationNotes";
import { latestRun, statusLine, type RunEntry, type SessionView } from "../src/session";
import { initialRunState, reduceAll } from "../src/timeline/reducer";
import type { RunState, VerifiedReport } from "../src/timeline/state";
import { fixture } from "./fixtures";
import { testRoot } from "./dom";

const root = testRoot();

function entry(state: RunState, conn: RunEntry["conn"] = "live"): RunEntry {
  return { state, conn, connDetail: null, startedAt: 0 };
}

const running = () => initialRunState("r2");
const asking = () => reduceAll(fixture("clarification"));

function view(runs: Record<string, RunEntry>): SessionView {
  return {
    sessionId: "s",
    title: "t",
    loading: false,
    error: null,
    thread: [
      { kind: "user", content: "first", runId: "r1" },
      { kind: "assistant", content: "a note" },
      { kind: "user", content: "second", runId: "r2" },
    ],
    runs,
  };
}

describe("latestRun", () => {
  it("is the last run in the thread; busy while it runs and its stream has not failed", () => {
    const v = view({ r1: entry(asking()), r2: entry(running()) });
    expect(latestRun(v)).toMatchObject({ runId: "r2", busy: true, awaitingAnswer: false });
    expect(latestRun(view({ r1: entry(asking()), r2: entry(running(), "failed") })).busy).toBe(false);
  });

  it("awaits an answer only when the latest run asked for clarification", () => {
    expect(latestRun(view({ r1: entry(asking()), r2: entry(asking()) }))).toMatchObject({ busy: false, awaitingAnswer: true });
    expect(latestRun(view({ r1: entry(asking()), r2: entry(running()) })).awaitingAnswer).toBe(false);
  });

  it("has no run for a thread without one, or before the run's stream is known", () => {
    expect(latestRun({ thread: [], runs: {} })).toEqual({ runId: null, entry: null, busy: false, awaitingAnswer: false });
    expect(latestRun(view({}))).toMatchObject({ runId: "r2", entry: null, busy: false });
  });
});

describe("statusLine", () => {
  const phase = (s: RunState) => `phase of ${s.runId}`;
  it("says the connection is being restored before anything about the run", () => {
    const latest = latestRun(view({ r2: entry(running(), "reconnecting") }));
    expect(statusLine(latest, false, phase)).toBe("Reconnecting…");
    expect(statusLine(latestRun(view({ r2: entry(running()) })), true, phase)).toBe("phase of r2");
  });
  it("says a session is loading when there is no run yet, else nothing", () => {
    const none = latestRun({ thread: [], runs: {} });
    expect(statusLine(none, true, phase)).toBe("Loading…");
    expect(statusLine(none, false, phase)).toBe("");
  });
});

describe("Thread", () => {
  const scroller = { ref: { current: null }, onScroll: () => undefined };
  it("offers the answer box only in the latest run's exchange", () => {
    const onAnswer = vi.fn(async () => undefined);
    act(() =>
      render(
        <Thread
          view={view({ r1: entry(asking(), "closed"), r2: entry(asking(), "closed") })}
          latestRunId="r2"
          scroller={scroller}
          showWelcome={false}
          onPick={() => undefined}
          onAnswer={onAnswer}
          onAsk={null}
        />,
        root,
      ),
    );
    const exchanges = root.querySelectorAll("article.exchange");
    expect(exchanges).toHaveLength(2);
    expect(exchanges[0].querySelector("textarea, input")).toBeNull();
    expect(exchanges[1].querySelector("textarea, input")).not.toBeNull();
    expect(root.querySelector(".msg.assistant")?.textContent).toBe("a note");
  });

  it("shows the examples on an empty page and hands a picked one to the composer", () => {
    const onPick = vi.fn();
    const empty: SessionView = { ...view({}), thread: [] };
    act(() =>
      render(<Thread view={empty} latestRunId={null} scroller={scroller} showWelcome onPick={onPick} onAnswer={null} onAsk={null} />, root),
    );
    const examples = root.querySelectorAll<HTMLButtonElement>(".examples button");
    expect(examples.length).toBeGreaterThan(0);
    act(() => examples[1].click());
    expect(onPick).toHaveBeenCalledWith(examples[1].textContent);
  });
});

describe("report pieces", () => {
  const report = (over: Partial<VerifiedReport>): VerifiedReport => ({
    reportId: "rep",
    title: "",
    summary: "",
    keyFindings: [],
    method: null,
    markdown: "",
    sources: [],
    removed: [],
    unsupported: [],
    ...over,
  });

  it("lists doubted and removed citations under folds that count them, and nothing when there are none", () => {
    act(() =>
      render(
        <VerificationNotes
          report={report({
            unsupported: [
              { marker: "[2]", occurrence: 1, sentence: "S.", reason: "not in source" },
              { marker: "", occurrence: 1, sentence: "T.", reason: "no citation" },
            ],
            removed: [
              { marker: "[7]", reason: "no such source" },
              { marker: "[8]", reason: "unsafe URL" },
            ],
          })}
        />,
        root,
      ),
    );
    const folds = root.querySelectorAll("details");
    expect([...folds].map((d) => d.querySelector("summary")?.textContent)).toEqual([
      "2 claims may not be supported",
      "2 citations removed during verification",
    ]);
    expect(folds[1].querySelectorAll("li")[1].textContent).toBe("[8]: unsafe URL");
    const uncited = folds[0].querySelectorAll("li")[1];
    expect(uncited.querySelector("code")).toBeNull();
    expect(uncited.textContent).toBe("uncited “T.” — no citation");
    act(() => render(<VerificationNotes report={report({})} />, root));
    expect(root.querySelector("details")).toBeNull();
  });

  it("says whether the report is streaming, being verified or verified", () => {
    const text = (verified: boolean, done: boolean) => {
      act(() => render(<ReportState verified={verified} done={done} />, root));
      return root.textContent?.trim();
    };
    expect(text(false, false)).toBe("Writing report…");
    expect(text(false, true)).toBe("Verifying citations…");
    expect(text(true, true)).toBe("✓ Verified report");
  });

  it("keys each doubted citation by the chip it marks (its marker and occurrence)", () => {
    const m = unsupportedByChip([
      { marker: "[3]", occurrence: 2, sentence: "", reason: "second three" },
      { marker: "[1]", sentence: "", reason: "first one" } as never,
    ]);
    expect([...m]).toEqual([
      ["[3]#2", "second three"],
      ["[1]#1", "first one"],
    ]);
  });
});
