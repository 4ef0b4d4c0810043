import { render } from "preact";
import { act } from "preact/test-utils";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ChangesView } from "../src/components/Changes";
import { ScheduleForm } from "../src/components/ScheduleForm";
import { ScheduleHistory } from "../src/components/ScheduleHistory";
import { SchedulesPage } from "../src/components/Schedules";
import { pageTitle, parseRoute, runHash } from "../src/route";
import {
  countsText,
  describeCron,
  describeInterval,
  describeTiming,
  fieldErrors,
  firingResult,
  formatDue,
  groupChanges,
  pairPassages,
  withoutChangesSection,
  withoutMarkers,
  wordDiff,
  type FiringLike,
} from "../src/schedules";
import { reduceAll } from "../src/timeline/reducer";
import type { ChangeCounts, ChangeSet, Packet } from "../src/types";
import { testRoot } from "./dom";

const ZERO: ChangeCounts = {
  sources_new: 0,
  sources_gone: 0,
  sources_changed: 0,
  sources_unchanged: 0,
  claims_new: 0,
  claims_dropped: 0,
  claims_changed: 0,
  claims_unchanged: 0,
};

const LIMIT = (n: number) => `The widget limit X = ${n} for every account on the standard plan.`;

function changeSet(over: Partial<ChangeSet> = {}): ChangeSet {
  return {
    since: "2026-03-02T06:00:00.000+00:00",
    previous_report_id: "rep_prev",
    changed: true,
    counts: { ...ZERO, claims_changed: 1, claims_new: 1, claims_dropped: 1, claims_unchanged: 2, sources_changed: 1, sources_gone: 1, sources_unchanged: 1 },
    claims: [
      { status: "new", sentence: "Widgets now ship in two days [2].", previous: null, label: null, numbers: [2], urls: ["corpus://c/ship.md"] },
      { status: "changed", sentence: `${LIMIT(7)} [1]`, previous: LIMIT(5), label: "contradicted", numbers: [1], urls: ["corpus://c/widget.md"] },
      { status: "dropped", sentence: "Widgets are painted blue.", previous: null, label: null, numbers: [], urls: [] },
    ],
    sources: [
      { status: "gone", url: "corpus://c/old.md", title: "Old notes", number: null, added: [], removed: [] },
      { status: "changed", url: "corpus://c/widget.md", title: "Widget limits", number: 1, added: [LIMIT(7)], removed: [LIMIT(5)] },
    ],
    matched_by: "deterministic",
    ...over,
  };
}

describe("timings in words", () => {
  it("describes the common cron shapes and quotes the rest", () => {
    expect(describeCron("0 7 * * 1-5")).toBe("On weekdays at 07:00");
    expect(describeCron("30 6 * * *")).toBe("Every day at 06:30");
    expect(describeCron("0 9 * * 1,5")).toBe("On Monday and Friday at 09:00");
    expect(describeCron("0 9 * * 0")).toBe("On Sunday at 09:00");
    expect(describeCron("0 8,18 * * *")).toBe("Every day at 08:00 and 18:00");
    expect(describeCron("*/15 * * * *")).toBe("Every 15 minutes");
    expect(describeCron("0 * * * *")).toBe("Every hour, on the hour");
    expect(describeCron("0 9 1 * *")).toBe("On day 1 of every month at 09:00");
    expect(describeCron("0 9 24 12 *")).toBe("Every year on December 24 at 09:00");
    expect(describeCron("0 9-17 * * *")).toBe("On the cron schedule “0 9-17 * * *”");
    expect(describeCron("0 7 * *")).toBe("On the cron schedule “0 7 * *”");
  });

  it("describes an interval in days, hours and minutes", () => {
    expect(describeInterval(6 * 3600)).toBe("6 hours");
    expect(describeInterval(5400)).toBe("1 hour 30 minutes");
    expect(describeInterval(86400 + 60)).toBe("1 day 1 minute");
  });

  it("names the zone a cron expression is read in, and none for an interval", () => {
    expect(describeTiming({ cron: "0 7 * * 1-5", everyS: null, timezone: "Europe/Berlin" })).toBe("On weekdays at 07:00 (Europe/Berlin time)");
    expect(describeTiming({ cron: null, everyS: 21600, timezone: "Europe/Berlin" })).toBe("Every 6 hours");
  });

  it("shows a due time in the reader's zone and, when it is another, in the schedule's", () => {
    expect(formatDue("2026-03-02T06:00:00.000+00:00", "Europe/Berlin", "UTC")).toEqual({ local: "Mon 2 Mar, 06:00", there: "Mon 2 Mar, 07:00 Europe/Berlin" });
    // In summer Berlin is two hours ahead: the same wall-clock time is another UTC instant.
    expect(formatDue("2026-07-06T05:00:00.000+00:00", "Europe/Berlin", "America/New_York")).toEqual({
      local: "Mon 6 Jul, 01:00",
      there: "Mon 6 Jul, 07:00 Europe/Berlin",
    });
    expect(formatDue("2026-03-02T06:00:00.000+00:00", "UTC", "UTC")).toEqual({ local: "Mon 2 Mar, 06:00", there: null });
    expect(formatDue("not a time", "UTC", "UTC")).toBeNull();
  });
});

describe("a firing's result", () => {
  const fired = (over: Partial<FiringLike>): FiringLike => ({ status: "fired", detail: null, runStatus: "completed", changes: null, ...over });

  it("tells changed, nothing changed, the first run, running, skipped and failed apart", () => {
    const counts = { ...ZERO, claims_changed: 1 };
    expect(firingResult(fired({ changes: { changed: true, counts } })).label).toBe("Changed");
    expect(firingResult(fired({ changes: { changed: false, counts: ZERO } })).label).toBe("Nothing changed");
    expect(firingResult(fired({})).kind).toBe("first");
    expect(firingResult(fired({ runStatus: "running" })).kind).toBe("running");
    expect(firingResult(fired({ runStatus: "error" })).kind).toBe("failed");
    expect(firingResult(fired({ status: "skipped", runStatus: null, detail: "its previous run was still running" }))).toEqual({
      kind: "skipped",
      label: "Skipped",
      reason: "its previous run was still running",
    });
    expect(firingResult(fired({ status: "failed", runStatus: null, detail: "at the run limit" })).reason).toBe("at the run limit");
    expect(firingResult(null).kind).toBe("none");
  });

  it("sums a diff up in one line, naming only what moved, then what did not", () => {
    expect(countsText(changeSet().counts)).toBe("Claims: 1 changed, 1 new, 1 dropped · Sources: 1 changed, 1 gone · unchanged: 2 claims, 1 source");
    expect(countsText({ ...ZERO, claims_unchanged: 3, sources_unchanged: 2 })).toBe("Nothing changed · unchanged: 3 claims, 2 sources");
  });
});

describe("the diff", () => {
  it("groups claims and sources by what happened to them, keeping the server's order", () => {
    const g = groupChanges(changeSet());
    expect(g.claims.changed.map((c) => c.previous)).toEqual([LIMIT(5)]);
    expect(g.claims.new.map((c) => c.numbers)).toEqual([[2]]);
    expect(g.claims.dropped.map((c) => c.sentence)).toEqual(["Widgets are painted blue."]);
    expect(g.sources.changed.map((s) => s.title)).toEqual(["Widget limits"]);
    expect(g.sources.gone.map((s) => s.url)).toEqual(["corpus://c/old.md"]);
    expect(g.sources.new).toEqual([]);
  });

  it("marks the words that changed between two sentences", () => {
    const d = wordDiff(LIMIT(5), LIMIT(7));
    expect(d.before.filter((s) => s.kind !== "same").map((s) => s.text)).toEqual(["5"]);
    expect(d.after.filter((s) => s.kind !== "same").map((s) => s.text)).toEqual(["7"]);
    expect(d.before.map((s) => s.text).join("")).toBe(LIMIT(5));
    expect(d.after.map((s) => s.text).join("")).toBe(LIMIT(7));
    expect(withoutMarkers("X is 7 [1] and Y [2, 3].")).toBe("X is 7 and Y.");
  });

  it("pairs an edited passage with the one it became, and leaves what is only new or only gone alone", () => {
    const p = pairPassages(
      ["Widgets are painted blue.", LIMIT(5), "Shipping takes three days."],
      ["Orders now include a manual.", LIMIT(7), "Widgets are painted blue and red."],
    );
    expect(p.pairs).toEqual([
      { removed: LIMIT(5), added: LIMIT(7) },
      { removed: "Widgets are painted blue.", added: "Widgets are painted blue and red." },
    ]);
    expect(p.added).toEqual(["Orders now include a manual."]);
    expect(p.removed).toEqual(["Shipping takes three days."]);
  });

  it("takes the server's section out of the markdown, and only it", () => {
    const section = "## What changed since 2026-03-02 06:00 UTC\n\n1 changed …\n\n- **Changed:** X [1]\n- **New source:** Y [2]";
    expect(withoutChangesSection(`# Widgets\n\n${section}\n\n## Limits\n\nX = 7 [1].`, true)).toBe("# Widgets\n\n## Limits\n\nX = 7 [1].");
    expect(withoutChangesSection(`${section}\n\n- A list of the report's own`, true)).toBe("- A list of the report's own");
    const none = "## What changed since 2026-03-02 06:00 UTC\n\nNothing changed: the same claims, from the same sources.";
    expect(withoutChangesSection(`# Widgets\n\n${none}\n\n- first point\n- second`, false)).toBe("# Widgets\n\n- first point\n- second");
    expect(withoutChangesSection("# Widgets\n\nNo section here.", true)).toBe("# Widgets\n\nNo section here.");
  });
});

describe("ChangesView", () => {
  const root = testRoot();

  it("labels every item in words, strikes what went and renders hostile text as text", () => {
    const hostile = '<img src=x onerror="window.__pwned=1"> X = 9';
    const changes = changeSet();
    changes.claims.push({ status: "new", sentence: hostile, previous: null, label: null, numbers: [], urls: [] });
    act(() => render(<ChangesView changes={changes} titleOf={(n) => (n === 1 ? "Widget limits" : undefined)} />, root));
    const items = [...root.querySelectorAll(".change")];
    expect(items.map((li) => li.querySelector(".change-tag")!.textContent!.trim())).toEqual([
      "~ Changed",
      "+ New",
      "+ New",
      "− No longer found",
      "~ Changed",
      "− No longer cited",
    ]);
    const changed = items[0];
    expect(changed.querySelector(".change-tag-contradicted")!.textContent).toBe("⚠ Contradicts the earlier claim");
    expect(changed.querySelector(".change-before")!.textContent).toBe(`Before: ${LIMIT(5)}`);
    expect(changed.querySelector(".change-before del")!.textContent).toBe("5");
    expect(changed.querySelector(".change-after ins")!.textContent).toBe("7");
    expect(changed.querySelector<HTMLElement>(".cite-chip")!.dataset.cite).toBe("1");
    expect(changed.querySelector(".cite-chip")!.getAttribute("aria-label")).toBe("Source 1: Widget limits");
    expect(items[3].querySelector("del")!.textContent).toBe("Widgets are painted blue.");
    const edited = items[4].querySelector(".passage-edited")!;
    expect(edited.querySelector(".change-before")!.textContent).toBe(`Said: ${LIMIT(5)}`);
    expect(edited.querySelector(".change-before del")!.textContent).toBe("5");
    expect(edited.querySelector(".change-after")!.textContent).toBe(`Now says: ${LIMIT(7)}`);
    expect(edited.querySelector(".change-after ins")!.textContent).toBe("7");
    expect(root.querySelector("img")).toBeNull();
    expect(items[2].textContent).toContain(hostile);
  });

  it("says in one line that nothing changed", () => {
    act(() =>
      render(
        <ChangesView changes={changeSet({ changed: false, claims: [], sources: [], counts: { ...ZERO, claims_unchanged: 2 } })} titleOf={() => undefined} />,
        root,
      ),
    );
    expect(root.querySelector(".changes-none")!.textContent).toBe("Nothing changed: the same claims, from the same sources.");
    expect(root.querySelectorAll(".change")).toHaveLength(0);
  });
});

describe("the report of a scheduled run", () => {
  it("keeps the report packet's changes for the diff view", () => {
    const changes = changeSet();
    const packets = [
      { seq: 0, run_id: "r1", placement: { turn_index: 0 }, obj: { type: "message_start", final_documents: [] } },
      { seq: 1, run_id: "r1", placement: { turn_index: 0 }, obj: { type: "report", report_id: "rep1", markdown: "X", sources: [], changes } },
    ] as unknown as Packet[];
    const s = reduceAll(packets);
    const block = s.turns[0].blocks[0];
    expect(block.kind === "message" && block.report?.changes).toEqual(changes);
  });
});

describe("the schedule form", () => {
  const root = testRoot();
  afterEach(() => vi.unstubAllGlobals());

  it("shows the server's refusal next to the field it names", async () => {
    const posted: unknown[] = [];
    vi.stubGlobal(
      "fetch",
      vi.fn(async (url: string, init?: RequestInit) => {
        if (url.endsWith("/sources")) return new Response("[]", { status: 200 });
        posted.push(JSON.parse(String(init?.body)));
        return new Response(JSON.stringify({ detail: "cron: '0 7 * *' is not a cron expression (wrong number of fields)" }), { status: 422 });
      }),
    );
    const onCreated = vi.fn();
    await act(async () => render(<ScheduleForm onCreated={onCreated} onCancel={() => {}} />, root));
    const type = (sel: string, value: string) => {
      const el = root.querySelector<HTMLInputElement | HTMLTextAreaElement>(sel)!;
      el.value = value;
      el.dispatchEvent(new Event("input", { bubbles: true }));
    };
    await act(async () => {
      type("#schedule-question", "What is the widget limit?");
      type("#schedule-cron", "0 7 * *");
      type("#schedule-timezone", "Europe/Berlin");
    });
    await act(async () => {
      root.querySelector("form")!.dispatchEvent(new Event("submit", { bubbles: true, cancelable: true }));
    });
    await vi.waitFor(() => expect(root.querySelector("#schedule-cron-error")).not.toBeNull());
    expect(posted).toEqual([{ question: "What is the widget limit?", cron: "0 7 * *", timezone: "Europe/Berlin", notify: "on_change" }]);
    expect(root.querySelector("#schedule-cron-error")!.textContent).toContain("'0 7 * *' is not a cron expression");
    expect(root.querySelector("#schedule-cron")!.getAttribute("aria-invalid")).toBe("true");
    expect(root.querySelector("#schedule-cron")!.getAttribute("aria-describedby")).toContain("schedule-cron-error");
    expect(onCreated).not.toHaveBeenCalled();
  });

  it("places request validation's errors by field and the rest on the form", () => {
    expect(
      fieldErrors(
        [
          { loc: ["body", "webhook_url"], msg: "too long" },
          { loc: ["body"], msg: "bad body" },
        ],
        "422",
      ),
    ).toEqual({
      webhook_url: "too long",
      form: "bad body",
    });
    expect(fieldErrors("give either cron or every", "422")).toEqual({ form: "give either cron or every" });
    expect(fieldErrors(null, "422 Unprocessable Entity")).toEqual({ form: "422 Unprocessable Entity" });
  });
});

describe("routes", () => {
  it("reads sessions, runs, the schedules page and one schedule from the hash", () => {
    expect(parseRoute("#/")).toEqual({ page: "session", sessionId: null, runId: null });
    expect(parseRoute("#/s/s_1")).toEqual({ page: "session", sessionId: "s_1", runId: null });
    expect(parseRoute(runHash("s_1", "r 2"))).toEqual({ page: "session", sessionId: "s_1", runId: "r 2" });
    expect(parseRoute("#/schedules")).toEqual({ page: "schedules" });
    expect(parseRoute("#/keys")).toEqual({ page: "keys" });
    expect(parseRoute("#/schedules/sch_1")).toEqual({ page: "schedule", scheduleId: "sch_1" });
    expect(parseRoute("#/s/%E0%A4%A")).toEqual({ page: "session", sessionId: null, runId: null });
  });
});

describe("the schedules page", () => {
  const root = testRoot();
  afterEach(() => vi.unstubAllGlobals());

  const SCHEDULE = {
    id: "sch_1",
    session_id: "s_1",
    question: "What is the widget limit?",
    cron: "0 7 * * 1-5",
    every_s: null,
    timezone: "Europe/Berlin",
    sources: null,
    mode: "light",
    time_budget_s: null,
    notify: "on_change",
    webhook_url: null,
    webhook_secret_set: false,
    email: null,
    paused: false,
    next_due_at: "2026-03-02T06:00:00.000+00:00",
    created_at: "2026-03-01T10:00:00.000+00:00",
    updated_at: "2026-03-01T10:00:00.000+00:00",
    last_firing: {
      id: "fir_1",
      due_at: "2026-03-01T06:00:00.000+00:00",
      fired_at: "2026-03-01T06:00:03.000+00:00",
      status: "skipped",
      run_id: null,
      detail: "its previous run was still running",
      delivery: "none",
      delivery_detail: null,
      delivery_attempts: 0,
    },
  };

  it("lists a schedule in words, pauses it, and deletes it only once asked again", async () => {
    const calls: [string, string][] = [];
    vi.stubGlobal(
      "fetch",
      vi.fn(async (url: string, init?: RequestInit) => {
        const method = init?.method ?? "GET";
        calls.push([method, `${url}${init?.body ? ` ${String(init.body)}` : ""}`]);
        if (method === "DELETE") return new Response(null, { status: 204 });
        if (method === "PATCH") return new Response(JSON.stringify({ ...SCHEDULE, paused: true }), { status: 200 });
        return new Response(JSON.stringify([SCHEDULE]), { status: 200 });
      }),
    );
    await act(async () => render(<SchedulesPage />, root));
    await vi.waitFor(() => expect(root.querySelector(".schedule-card")).not.toBeNull());
    const card = root.querySelector(".schedule-card")!;
    expect(card.querySelector(".schedule-question")!.textContent).toBe("What is the widget limit?");
    expect(card.textContent).toContain("On weekdays at 07:00 (Europe/Berlin time)");
    expect(card.querySelector(".result")!.textContent).toBe("⤼ Skipped: its previous run was still running");
    const button = (name: string) => [...card.querySelectorAll("button")].find((b) => b.textContent === name)!;

    await act(async () => button("Pause").click());
    // Done once the list has been asked for again.
    await vi.waitFor(() => expect(calls.map(([m]) => m)).toEqual(["GET", "PATCH", "GET"]));
    await vi.waitFor(() => expect(button("Delete…").disabled).toBe(false));
    expect(calls.find(([m]) => m === "PATCH")![1]).toBe('/api/schedules/sch_1 {"paused":true}');

    await act(async () => button("Delete…").click());
    expect(calls.some(([m]) => m === "DELETE")).toBe(false);
    const confirm = card.querySelector('[role="group"][aria-label="Confirm deletion"]')!;
    expect(confirm.textContent).toContain("Delete this schedule?");
    await act(async () => [...confirm.querySelectorAll("button")].find((b) => b.textContent === "Delete")!.click());
    await vi.waitFor(() => expect(calls.filter(([m]) => m === "DELETE").map(([, u]) => u)).toEqual(["/api/schedules/sch_1"]));
  });

  it("shows the webhook's signing secret once, when the schedule is made", async () => {
    const created = {
      ...SCHEDULE,
      webhook_url: "https://hooks.example.com/x",
      webhook_secret_set: true,
      webhook_secret: "s3cr3t-signing-key-0123456789",
      last_firing: null,
    };
    vi.stubGlobal(
      "fetch",
      vi.fn(async (url: string, init?: RequestInit) => {
        if (init?.method === "POST") return new Response(JSON.stringify(created), { status: 201 });
        if (url.endsWith("/sources")) return new Response("[]", { status: 200 });
        return new Response(JSON.stringify([]), { status: 200 });
      }),
    );
    await act(async () => render(<SchedulesPage />, root));
    await act(async () => [...root.querySelectorAll("button")].find((b) => b.textContent === "+ New schedule")!.click());
    const question = root.querySelector<HTMLTextAreaElement>("#schedule-question")!;
    await act(async () => {
      question.value = "What is the widget limit?";
      question.dispatchEvent(new Event("input", { bubbles: true }));
    });
    await act(async () => {
      root.querySelector("form")!.dispatchEvent(new Event("submit", { bubbles: true, cancelable: true }));
    });
    await vi.waitFor(() => expect(root.querySelector(".secret")?.textContent).toBe("s3cr3t-signing-key-0123456789"));
    expect(root.querySelector(".secret-notice")!.textContent).toContain("it is not shown again");
    expect(root.querySelector("form")).toBeNull();
  });

  it("shows in a schedule's history each run's result, what it found changed and whether its notification went out", async () => {
    const firing = SCHEDULE.last_firing;
    const detail = {
      ...SCHEDULE,
      last_firing: undefined,
      firings: [
        {
          ...firing,
          id: "fir_2",
          status: "fired",
          run_id: "r_2",
          detail: "run now",
          delivery: "failed",
          delivery_detail: "HTTP 500 after 3 attempts",
          run_status: "completed",
          report_id: "rep_2",
          changes: {
            changed: true,
            since: "2026-03-01T06:00:00+00:00",
            counts: { claims_changed: 1, claims_unchanged: 2, sources_changed: 1, sources_unchanged: 1 },
          },
        },
        {
          ...firing,
          id: "fir_1",
          status: "fired",
          run_id: "r_1",
          detail: null,
          delivery: "delivered",
          run_status: "completed",
          report_id: "rep_1",
          changes: null,
        },
      ],
    };
    vi.stubGlobal(
      "fetch",
      vi.fn(async () => new Response(JSON.stringify(detail), { status: 200 })),
    );
    await act(async () => render(<ScheduleHistory scheduleId="sch_1" />, root));
    await vi.waitFor(() => expect(root.querySelectorAll("li.firing")).toHaveLength(2));
    const [latest, first] = [...root.querySelectorAll("li.firing")];
    expect(latest.querySelector(".result")!.textContent).toBe("Δ Changed");
    expect(latest.querySelector(".firing-counts")!.textContent).toBe("Claims: 1 changed · Sources: 1 changed · unchanged: 2 claims, 1 source");
    expect(latest.querySelector(".firing-delivery")!.textContent).toBe("! Notification: failed (HTTP 500 after 3 attempts)");
    expect(latest.querySelector<HTMLAnchorElement>(".firing-open")!.getAttribute("href")).toBe("#/s/s_1/r/r_2");
    expect(first.querySelector(".result")!.textContent).toBe("• First run");
    expect(first.querySelector(".firing-delivery")!.textContent).toBe("Notification: delivered");
    // The card's last result is the newest run's.
    expect(root.querySelector(".schedule-card .result")!.textContent).toBe("Δ Changed");
  });
});

describe("pageTitle", () => {
  it("names the keys and schedules pages, and a session by its own title", () => {
    expect(pageTitle(parseRoute("#/keys"), "Descriptors")).toBe("API keys");
    expect(pageTitle(parseRoute("#/schedules"), "Descriptors")).toBe("Schedules");
    expect(pageTitle(parseRoute("#/schedules/sch_1"), null)).toBe("Schedules");
    expect(pageTitle(parseRoute("#/s/s_1"), "Descriptors")).toBe("Descriptors");
    expect(pageTitle(parseRoute("#/"), null)).toBe("");
  });
});
