// Loads every packet stream in test/fixtures: *.json (an array) or *.jsonl (a packet a line,
// as `sleuth research --json` prints them), so recorded engine streams can simply be dropped in.

import type { Packet } from "../src/types";

const raw = import.meta.glob("./fixtures/*.{json,jsonl}", { query: "?raw", import: "default", eager: true }) as Record<
  string,
  string
>;

export function parseStream(text: string, name = "stream"): Packet[] {
  const t = text.trim();
  if (t.startsWith("[")) return JSON.parse(t) as Packet[];
  return t
    .split(/\r?\n/)
    .filter((l) => l.trim())
    .map((l, i) => {
      try {
        return JSON.parse(l) as Packet;
      } catch (e) {
        throw new Error(`${name}: line ${i + 1} is not JSON: ${String(e)}`);
      }
    });
}

export const fixtures: Record<string, Packet[]> = Object.fromEntries(
  Object.entries(raw).map(([path, text]) => {
    const name = path.replace(/^.*\//, "").replace(/\.jsonl?$/, "");
    return [name, parseStream(text, name)];
  }),
);

export function fixture(name: string): Packet[] {
  const f = fixtures[name];
  if (!f) throw new Error(`no fixture ${name}; have ${Object.keys(fixtures).join(", ")}`);
  return f;
}
