import type { Notice as NoticeT } from "../timeline/state";

const LEVEL_TEXT: Record<string, string> = {
  agent_force_report: "Agent told to wrap up",
  agent_hard_timeout: "Agent timed out",
  orchestrator_force_report: "Research stopped early",
  report_timeout: "Report cut short",
  deadline: "Deadline reached",
  plan_review_timeout: "Plan not reviewed in time",
  tool_unavailable: "Tool server unavailable",
};

export function NoticeView({ notice, compact }: { notice: NoticeT; compact?: boolean }) {
  const isError = notice.kind === "error";
  const label = isError ? (notice.recoverable ? "Error (recovered)" : "Error") : LEVEL_TEXT[notice.level ?? ""] ?? "Degraded";
  return (
    <div class={`notice ${isError ? "notice-error" : "notice-degraded"} ${compact ? "compact" : ""}`} role={isError ? "alert" : "note"}>
      <span class="notice-icon" aria-hidden="true">{isError ? "✕" : "⚠"}</span>
      <strong>{label}</strong>
      {notice.message ? <span class="notice-msg">: {notice.message}</span> : null}
    </div>
  );
}
