import { describe, expect, it } from "vitest";
import { BUDGET_CHOICES, parseBudget, storeBudget } from "../src/budget";
import { initialRunState, reduce } from "../src/timeline/reducer";
import { timeLeftOf } from "../src/timeline/selectors";
import type { Packet, PacketObj } from "../src/types";

function packet(seq: number, obj: Record<string, unknown>): Packet {
  return { seq, run_id: "r1", placement: { turn_index: 0, tab_index: 0, sub_turn_index: null }, obj: obj as unknown as PacketObj };
}

const start = { type: "run_start", session_id: "s1", question: "Q?", mode: "light", models: {} };

describe("time budget", () => {
  it("run_start's budget is kept and counts down to zero, never below", () => {
    const s = reduce(initialRunState(), packet(0, { ...start, time_budget_s: 300 }));
    expect(s.timeBudgetS).toBe(300);
    expect(timeLeftOf(s, 0)).toBe(300);
    expect(timeLeftOf(s, 75.5)).toBe(224.5);
    expect(timeLeftOf(s, 400)).toBe(0);
  });

  it("a run without a budget (older servers) shows no time left", () => {
    const s = reduce(initialRunState(), packet(0, start));
    expect(s.timeBudgetS).toBeNull();
    expect(timeLeftOf(s, 10)).toBeNull();
    expect(reduce(initialRunState(), packet(0, { ...start, time_budget_s: 0 })).timeBudgetS).toBeNull();
  });

  it("progress packets with time left do not disturb the task counts", () => {
    let s = reduce(initialRunState(), packet(0, { ...start, time_budget_s: 60 }));
    s = reduce(s, packet(1, { type: "progress", processed_tasks: 1, total_tasks: 3, time_left_s: 41.2 }));
    expect(s.progress).toEqual({ processed: 1, total: 3 });
    expect(s.timeBudgetS).toBe(60);
  });

  it("a stored choice is used only while it is still offered", () => {
    expect(parseBudget(null)).toBeNull();
    expect(parseBudget("")).toBeNull();
    expect(parseBudget("300")).toBe(300);
    expect(parseBudget("301")).toBeNull();
    expect(parseBudget("soon")).toBeNull();
    for (const c of BUDGET_CHOICES) expect(parseBudget(storeBudget(c.seconds))).toBe(c.seconds);
  });
});
