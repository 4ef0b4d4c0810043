import type { VerifiedReport } from "../timeline/state";
import { Markdown } from "./Markdown";

/**
 * The report's artifact fields above its body: title (plain text), summary and key findings (inline
 * markdown, sanitised) with citation chips, and the engine's confidence (its reason on hover). Chips use the report body's delegated handlers (hover, click).
 */
export function ReportHeader({ report, titleOf }: { report: VerifiedReport; titleOf: (n: number) => string | undefined }) {
  if (!report.title && !report.summary && !report.keyFindings.length) return null;
  const confidence = report.method?.confidence;
  return (
    <header class="report-header">
      {report.title ? <h2 class="report-title">{report.title}</h2> : null}
      {confidence ? (
        <span class={`confidence confidence-${confidence}`} title={`Because ${report.method?.confidence_reason ?? "of the run's counts"}`}>
          {confidence} confidence
        </span>
      ) : null}
      {/* Models write code spans and emphasis here too; shown as markup, never as raw backticks. */}
      {report.summary ? (
        <p class="report-summary">
          <Markdown inline markdown={report.summary} />
        </p>
      ) : null}
      {report.keyFindings.length ? (
        <section class="key-findings" aria-label="Key findings">
          <h3>Key findings</h3>
          <ul>
            {report.keyFindings.map((finding, i) => (
              <li key={i}>
                <Markdown inline markdown={finding.text} />
                {finding.citations.map((n) => {
                  const title = titleOf(n);
                  return (
                    <button key={n} type="button" class="cite-chip" data-cite={n} aria-label={`Source ${n}${title ? `: ${title}` : ""}`}>
                      {n}
                    </button>
                  );
                })}
              </li>
            ))}
          </ul>
        </section>
      ) : null}
    </header>
  );
}
