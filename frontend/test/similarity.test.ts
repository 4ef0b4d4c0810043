import { describe, expect, it } from "vitest";
import { similarity, stepsCoveredBy } from "../src/timeline/similarity";
import { planStepStates } from "../src/timeline/selectors";
import type { Lane } from "../src/timeline/state";

const steps = [
  "Find how generators are closed",
  "Explain try/finally semantics inside generators",
  "Compare with async generators",
];

const lane = (task: string, status: Lane["status"]): Lane => ({ tab: 0, task, status, steps: [], report: null, notices: [], forced: false });

describe("plan step matching", () => {
  it("scores rewritten tasks against their step", () => {
    expect(similarity("Research what happens when a generator is closed (generator.close)", steps[0])).toBeGreaterThan(0.5);
    expect(similarity("completely unrelated banana", steps[0])).toBe(0);
  });

  it("a task covering two steps ticks both; a vague task ticks its best match only", () => {
    expect(stepsCoveredBy("How are generators closed, and the try/finally semantics inside them", steps)).toEqual([0, 1]);
    expect(stepsCoveredBy("async generator behaviour", steps)).toEqual([2]);
    expect(stepsCoveredBy("banana", steps)).toEqual([]);
  });

  it("ticks done lanes, marks running lanes active, ignores failed lanes", () => {
    expect(
      planStepStates(steps, [lane("generator closing", "done"), lane("try/finally in generators", "running"), lane("async generators compared", "failed")]),
    ).toEqual(["done", "active", "todo"]);
  });
});
