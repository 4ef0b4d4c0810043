// Matching a research lane's task to the plan step it covers. The orchestrator rewrites
// plan steps into standalone tasks, so exact matches are rare: compare content words.

const STOP = new Set(
  (
    "a an and are as at be by can could do does for from how in into is it its of on or " +
    "that the their them then there these this those to was what when where which who why " +
    "will with within about between each other than use using used find identify research " +
    "investigate look explain describe summarise summarize determine gather compare"
  ).split(" "),
);

/** Lower-case content words with a crude stem, so "closures" meets "closure". */
export function contentWords(text: string): Set<string> {
  const words = (text.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? [])
    .filter((w) => w.length > 1 && !STOP.has(w))
    .map(stem);
  return new Set(words);
}

function stem(w: string): string {
  if (w.length > 5 && w.endsWith("ing")) return w.slice(0, -3);
  if (w.length > 4 && w.endsWith("ies")) return w.slice(0, -3) + "y";
  if (w.length > 4 && w.endsWith("es") && !w.endsWith("ses")) return w.slice(0, -2);
  if (w.length > 3 && w.endsWith("s") && !w.endsWith("ss")) return w.slice(0, -1);
  if (w.length > 4 && w.endsWith("ed")) return w.slice(0, -2);
  return w;
}

/** Unweighted overlap relative to the smaller set (a quick check for two texts alone). */
export function similarity(a: string, b: string): number {
  const x = contentWords(a);
  const y = contentWords(b);
  if (!x.size || !y.size) return 0;
  let common = 0;
  for (const w of x) if (y.has(w)) common++;
  return common / Math.min(x.size, y.size);
}

/** Clear coverage: a task may cover several steps. */
export const COVER_THRESHOLD = 0.5;
/** Below this even the best-scoring step is not considered covered. */
export const BEST_THRESHOLD = 0.25;

/**
 * How much of each step a task covers, as the share of the step's content words found in
 * the task, weighted so that words shared by every step (the topic itself) count little.
 */
export function coverage(task: string, steps: string[]): number[] {
  const sets = steps.map(contentWords);
  const df = new Map<string, number>();
  for (const set of sets) for (const w of set) df.set(w, (df.get(w) ?? 0) + 1);
  const idf = (w: string) => Math.log((steps.length + 1) / (df.get(w) ?? 1));
  const t = contentWords(task);
  return sets.map((set) => {
    let total = 0;
    let hit = 0;
    for (const w of set) {
      const weight = idf(w);
      total += weight;
      if (t.has(w)) hit += weight;
    }
    return total > 0 ? hit / total : 0;
  });
}

/** Indices of the plan steps a task covers. */
export function stepsCoveredBy(task: string, steps: string[]): number[] {
  const scores = coverage(task, steps);
  const covered = new Set<number>();
  let best = -1;
  scores.forEach((sc, i) => {
    if (sc >= COVER_THRESHOLD) covered.add(i);
    if (best < 0 || sc > scores[best]) best = i;
  });
  if (best >= 0 && scores[best] >= BEST_THRESHOLD) covered.add(best);
  return [...covered].sort((a, b) => a - b);
}
