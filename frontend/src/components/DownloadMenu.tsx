import { useRef, useState } from "preact/hooks";
import { errorText } from "../format";
import { usePopover } from "../hooks";
import * as api from "../api";

const FORMATS: { format: api.ExportFormat; label: string }[] = [
  { format: "md", label: "Markdown (.md)" },
  { format: "pdf", label: "PDF (.pdf)" },
  { format: "docx", label: "Word (.docx)" },
];

function save(blob: Blob, name: string) {
  const url = URL.createObjectURL(blob);
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/** Download the report as md, pdf or docx, rendered by the server from the stored report. */
export function DownloadMenu({ reportId }: { reportId: string }) {
  const [busy, setBusy] = useState<api.ExportFormat | null>(null);
  const [error, setError] = useState<string | null>(null);
  const menu = useRef<HTMLDetailsElement>(null);
  const close = () => {
    if (menu.current) menu.current.open = false;
  };
  usePopover(menu);
  const download = async (format: api.ExportFormat) => {
    setBusy(format);
    setError(null);
    try {
      save(await api.fetchReportFile(reportId, format), `sleuth-${reportId}.${format}`);
      close(); // an error stays open, to be read
    } catch (e) {
      setError(errorText(e));
    } finally {
      setBusy(null);
    }
  };
  return (
    <details class="download-menu" ref={menu}>
      <summary class="btn btn-ghost">Download</summary>
      <ul role="menu" aria-label="Download the report">
        {FORMATS.map(({ format, label }) => (
          <li key={format} role="none">
            <button type="button" role="menuitem" class="btn btn-ghost" disabled={busy !== null} onClick={() => void download(format)}>
              {busy === format ? "Preparing…" : label}
            </button>
          </li>
        ))}
      </ul>
      {error ? (
        <p class="small notice-error" role="alert">
          {error}
        </p>
      ) : null}
    </details>
  );
}
