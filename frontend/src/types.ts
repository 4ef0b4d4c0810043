// The streaming protocol as TypeScript types. Mirrors backend/sleuth/stream/packets.py
// (docs/protocol.md); names are the contract, so keep them identical.

export interface Document {
  id: string;
  url: string;
  title: string;
  snippet: string;
  source: string;
}

/** A document with its citation number in the final report. */
export interface NumberedSource extends Document {
  number: number;
}

export interface Placement {
  turn_index: number;
  tab_index: number;
  /** null (or absent) = top of its lane; an integer = a step inside an agent. */
  sub_turn_index: number | null;
}

export type StopReason = "completed" | "clarification" | "cancelled" | "error" | "deadline";
export type DegradedLevel =
  | "agent_force_report"
  | "agent_hard_timeout"
  | "orchestrator_force_report"
  | "report_timeout"
  | "deadline"
  | "output_cut";

export type PacketObj =
  | { type: "run_start"; session_id: string; question: string; mode: string; models: Record<string, string> }
  | { type: "clarification"; questions: string[] }
  | { type: "plan_start"; content?: string }
  | { type: "plan_delta"; content: string }
  | { type: "plan_done"; steps: string[] }
  | { type: "reasoning_start"; reasoning?: string }
  | { type: "reasoning_delta"; reasoning: string }
  | { type: "reasoning_done"; reasoning?: string }
  | { type: "top_level_branching"; num_parallel_branches: number }
  | { type: "research_agent_start"; task: string }
  | { type: "search_start"; provider: string }
  | { type: "search_queries"; queries: string[] }
  | { type: "search_documents"; documents: Document[] }
  | { type: "open_url_start" }
  | { type: "open_url_urls"; urls: string[] }
  | { type: "open_url_documents"; documents: Document[] }
  | { type: "intermediate_report_start"; content?: string }
  | { type: "intermediate_report_delta"; content: string }
  | { type: "intermediate_report_cited_docs"; documents: Document[] }
  | { type: "message_start"; final_documents?: Document[] }
  | { type: "message_delta"; content: string }
  | { type: "citation_info"; citation_number: number; document_id: string; url: string; title: string }
  | {
      type: "report";
      report_id: string;
      markdown: string;
      sources: NumberedSource[];
      removed_citations?: { marker: string; reason: string }[];
    }
  | { type: "progress"; processed_tasks: number; total_tasks: number }
  | { type: "usage"; role: string; model: string; input_tokens: number; output_tokens: number; cost_usd: number }
  | { type: "degraded"; level: DegradedLevel; detail: string }
  | { type: "error"; message: string; recoverable: boolean }
  | { type: "section_end" }
  | {
      type: "summary";
      elapsed_s: number;
      sources_seen: number;
      sources_fetched: number;
      sources_cited: number;
      input_tokens: number;
      output_tokens: number;
      cost_usd: number;
      report_id?: string | null;
    }
  | { type: "stop"; reason: StopReason };

export type PacketType = PacketObj["type"];

export interface Packet {
  seq: number;
  run_id: string;
  placement: Placement;
  obj: PacketObj;
}

/** Narrow a packet object by its type tag. */
export type ObjOf<T extends PacketType> = Extract<PacketObj, { type: T }>;
