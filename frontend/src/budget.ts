// The time budgets the composer offers, and how a chosen one is remembered between visits.

export interface BudgetChoice {
  /** Seconds; null means "the mode's default budget" (the server decides). */
  seconds: number | null;
  label: string;
}

export const BUDGET_CHOICES: BudgetChoice[] = [
  { seconds: null, label: "Default time" },
  { seconds: 60, label: "1 min" },
  { seconds: 120, label: "2 min" },
  { seconds: 300, label: "5 min" },
  { seconds: 900, label: "15 min" },
  { seconds: 1800, label: "30 min" },
  { seconds: 3600, label: "1 hour" },
];

export const BUDGET_KEY = "sleuth.budget";

/** The stored choice, if it is still one of the offered budgets; otherwise the default. */
export function parseBudget(stored: string | null): number | null {
  const n = stored === null || stored === "" ? NaN : Number(stored);
  return BUDGET_CHOICES.some((c) => c.seconds === n) ? n : null;
}

export function storeBudget(seconds: number | null): string {
  return seconds === null ? "" : String(seconds);
}
