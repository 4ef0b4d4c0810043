// A stand-in for `sleuth serve`, for UI work without the engine: serves dist/ and the §4
// API from the packet fixtures, streaming them with delays. Not used in production.
//   node scripts/mock-server.mjs [port]     (default 8000, so the Vite dev proxy works too)
// A question containing "vague" gets the clarification stream; "fail" the failure stream.

import { createServer } from "node:http";
import { readFileSync, existsSync } from "node:fs";
import { dirname, join, extname } from "node:path";
import { fileURLToPath } from "node:url";

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const port = Number(process.argv[2] ?? 8000);
const DELAY = Number(process.env.MOCK_DELAY_MS ?? 60);
const load = (n) => JSON.parse(readFileSync(join(root, "test/fixtures", n + ".json"), "utf8"));
const streams = {
  happy: load("happy-3-lanes-2-cycles"),
  clarify: load("clarification"),
  fail: load("failed-and-timed-out"),
};

const sessions = new Map(); // id -> {id,title,created_at,messages,runs}
const runs = new Map(); // id -> {id, session_id, packets[], produced, status, listeners:Set, created_at}
let counter = 0;
const newId = (p) => `${p}_${Date.now().toString(36)}${(counter++).toString(36)}`;

function startRun(session, content) {
  const last = session.runs[session.runs.length - 1];
  const kind = /vague/i.test(content) && !(last && last.status === "clarification") ? "clarify" : /fail/i.test(content) ? "fail" : "happy";
  const id = newId("run");
  const template = streams[kind];
  const packets = template.map((p) => ({
    ...p,
    run_id: id,
    obj: p.obj.type === "run_start" ? { ...p.obj, session_id: session.id, question: content } : p.obj,
  }));
  const run = { id, session_id: session.id, packets, produced: [], status: "running", listeners: new Set(), created_at: new Date().toISOString() };
  runs.set(id, run);
  session.runs.push({ id, status: "running", created_at: run.created_at });
  session.messages.push({ role: "user", content, run_id: id });
  const tick = () => {
    if (run.status !== "running") return;
    const next = run.packets[run.produced.length];
    if (!next) return;
    push(run, next);
    if (next.obj.type === "stop") return finish(run, next.obj.reason);
    const slow = next.obj.type.endsWith("_delta") ? DELAY / 3 : DELAY;
    setTimeout(tick, slow);
  };
  setTimeout(tick, DELAY);
  return run;
}

function push(run, p) {
  run.produced.push(p);
  for (const l of run.listeners) l(p);
}

function finish(run, reason) {
  run.status = reason;
  const s = sessions.get(run.session_id);
  const r = s.runs.find((x) => x.id === run.id);
  if (r) r.status = reason;
  for (const l of run.listeners) l(null);
}

function json(res, code, body) {
  res.writeHead(code, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

function body(req) {
  return new Promise((resolve) => {
    let b = "";
    req.on("data", (c) => (b += c));
    req.on("end", () => {
      try {
        resolve(b ? JSON.parse(b) : {});
      } catch {
        resolve({});
      }
    });
  });
}

const TYPES = { ".html": "text/html", ".js": "text/javascript", ".css": "text/css", ".map": "application/json", ".svg": "image/svg+xml" };

createServer(async (req, res) => {
  const url = new URL(req.url, "http://x");
  const path = url.pathname;
  let m;
  if (path === "/api/health") return json(res, 200, { ok: true });
  if (path === "/api/sessions" && req.method === "GET") {
    return json(res, 200, [...sessions.values()].reverse().map(({ id, title, created_at }) => ({ id, title, created_at })));
  }
  if (path === "/api/sessions" && req.method === "POST") {
    const b = await body(req);
    const s = { id: newId("s"), title: b.title ?? "", created_at: new Date().toISOString(), messages: [], runs: [] };
    sessions.set(s.id, s);
    return json(res, 201, { id: s.id, title: s.title, created_at: s.created_at });
  }
  if ((m = /^\/api\/sessions\/([^/]+)$/.exec(path))) {
    const s = sessions.get(m[1]);
    return s ? json(res, 200, s) : json(res, 404, { detail: "no such session" });
  }
  if ((m = /^\/api\/sessions\/([^/]+)\/messages$/.exec(path)) && req.method === "POST") {
    const s = sessions.get(m[1]);
    if (!s) return json(res, 404, { detail: "no such session" });
    const b = await body(req);
    if (!s.title) s.title = String(b.content).slice(0, 60);
    const run = startRun(s, String(b.content ?? ""));
    return json(res, 200, { run_id: run.id });
  }
  if ((m = /^\/api\/runs\/([^/]+)\/cancel$/.exec(path)) && req.method === "POST") {
    const run = runs.get(m[1]);
    if (!run) return json(res, 404, { detail: "no such run" });
    if (run.status === "running") {
      const p = { seq: run.produced.length, run_id: run.id, placement: { turn_index: 9, tab_index: 0, sub_turn_index: null }, obj: { type: "stop", reason: "cancelled" } };
      push(run, p);
      finish(run, "cancelled");
    }
    return json(res, 200, { ok: true });
  }
  if ((m = /^\/api\/runs\/([^/]+)\/events$/.exec(path))) {
    const run = runs.get(m[1]);
    if (!run) return json(res, 404, { detail: "no such run" });
    const after = Number(req.headers["last-event-id"] ?? -1);
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
    const send = (p) => res.write(`event: packet\nid: ${p.seq}\ndata: ${JSON.stringify(p)}\n\n`);
    for (const p of run.produced) if (p.seq > after) send(p);
    if (run.status !== "running") return res.end();
    const hb = setInterval(() => res.write(": ping\n\n"), 5000);
    const l = (p) => (p ? send(p) : (clearInterval(hb), run.listeners.delete(l), res.end()));
    run.listeners.add(l);
    req.on("close", () => {
      clearInterval(hb);
      run.listeners.delete(l);
    });
    return;
  }
  if (path.startsWith("/api/")) return json(res, 404, { detail: "not found" });
  const file = join(root, "dist", path === "/" ? "index.html" : path);
  if (!file.startsWith(join(root, "dist")) || !existsSync(file)) {
    res.writeHead(404);
    return res.end("not found");
  }
  res.writeHead(200, { "content-type": TYPES[extname(file)] ?? "application/octet-stream" });
  res.end(readFileSync(file));
}).listen(port, "127.0.0.1", () => console.log(`mock sleuth on http://127.0.0.1:${port}`));
