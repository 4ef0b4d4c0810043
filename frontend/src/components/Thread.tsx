import type { RefObject } from "preact";
import type { RunEntry, SessionView, ThreadItem } from "../session";
import { RunView } from "./RunView";
// Each is answerable from the built-in corpus: tests/integration/test_starter_questions.py checks them.
import EXAMPLES from "../starters.json";

type Answer = ((text: string) => Promise<void>) | null;
type Ask = ((question: string, reportId: string) => Promise<void>) | null;

/**
 * The open session, top to bottom: each question with the run it started. Only the latest run
 * takes an answer to its clarification questions.
 */
export function Thread({
  view,
  latestRunId,
  scroller,
  showWelcome,
  onPick,
  onAnswer,
  onAsk,
}: {
  view: SessionView;
  latestRunId: string | null;
  scroller: { ref: RefObject<HTMLDivElement>; onScroll: () => void };
  showWelcome: boolean;
  onPick: (text: string) => void;
  onAnswer: Answer;
  onAsk: Ask;
}) {
  return (
    <div class="thread" ref={scroller.ref} onScroll={scroller.onScroll}>
      {view.error ? (
        <div class="notice notice-error" role="alert">
          Could not open this session: {view.error}
        </div>
      ) : null}
      {showWelcome ? <Welcome onPick={onPick} /> : null}
      {view.loading ? <p class="muted">Loading session…</p> : null}
      {view.thread.map((item, i) =>
        item.kind === "assistant" ? (
          <div class="msg assistant" key={`a${i}`}>
            {item.content}
          </div>
        ) : (
          <Exchange
            key={item.runId ?? `u${i}`}
            item={item}
            entry={item.runId ? view.runs[item.runId] : undefined}
            onAnswer={item.runId === latestRunId ? onAnswer : null}
            onAsk={onAsk}
          />
        ),
      )}
    </div>
  );
}

/** One question and the run it started. */
export function Exchange({
  item,
  entry,
  onAnswer,
  onAsk,
}: {
  item: Extract<ThreadItem, { kind: "user" }>;
  entry: RunEntry | undefined;
  onAnswer: Answer;
  onAsk: Ask;
}) {
  const question = item.content || entry?.state.question || "";
  return (
    <article class="exchange" aria-label={question ? `Question: ${question.slice(0, 80)}` : "Question"}>
      {question ? (
        <div class="msg user">
          <span class="sr-only">You asked: </span>
          {question}
        </div>
      ) : null}
      {entry ? <RunView entry={entry} onAnswer={onAnswer} onAsk={onAsk} /> : null}
    </article>
  );
}

function Welcome({ onPick }: { onPick: (text: string) => void }) {
  return (
    <div class="welcome">
      <h1>What should Sleuth research?</h1>
      <p class="muted">
        Sleuth asks what it needs to know, writes a plan, sends up to three agents to search and read in parallel, and
        writes a report where every claim links to its source.
      </p>
      <ul class="examples" aria-label="Example questions">
        {EXAMPLES.map((q) => (
          <li key={q}>
            <button type="button" class="btn btn-ghost example" onClick={() => onPick(q)}>
              {q}
            </button>
          </li>
        ))}
      </ul>
    </div>
  );
}
