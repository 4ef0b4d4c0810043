import { useEffect, useRef, useState } from "preact/hooks";
import { errorText } from "../format";
import * as api from "../api";

const STYLES: { style: api.AudioStyle; label: string }[] = [
  { style: "narration", label: "Narration (the whole report)" },
  { style: "overview", label: "Overview (short, one voice)" },
  { style: "dialogue", label: "Dialogue (two voices)" },
];
const POLL_MS = 1000;

/** What the button says while the server works: which stage, and how many lines are spoken. */
export function makingLabel(progress: api.AudioStatus["progress"]): string {
  if (progress?.stage === "speech" && progress.total) return `Speaking line ${progress.done} of ${progress.total}…`;
  if (progress?.stage === "script") return "Writing the script…";
  return "Making audio…";
}

/** Listen to the report: pick a style, the server makes the audio, a player appears when it is ready. */
export function AudioPlayer({ reportId }: { reportId: string }) {
  const [style, setStyle] = useState<api.AudioStyle>("overview");
  const [state, setState] = useState<"idle" | "making" | "ready" | "failed">("idle");
  const [error, setError] = useState<string | null>(null);
  const [src, setSrc] = useState<string | null>(null);
  const [progress, setProgress] = useState<api.AudioStatus["progress"]>(null);
  const cancelled = useRef(false);
  useEffect(() => {
    cancelled.current = false;
    return () => {
      cancelled.current = true;
    };
  }, []);
  useEffect(() => () => (src ? URL.revokeObjectURL(src) : undefined), [src]);

  const make = async () => {
    setState("making");
    setError(null);
    setProgress(null);
    try {
      let status = await api.startAudio(reportId, style);
      while (status.status === "pending" && !cancelled.current) {
        await new Promise((resolve) => setTimeout(resolve, POLL_MS));
        status = await api.audioStatus(status.audioId);
        if (!cancelled.current) setProgress(status.progress);
      }
      if (status.status !== "done" || !status.url) throw new Error(status.error ?? "the audio could not be made");
      const blob = await api.fetchAudio(status.url);
      if (cancelled.current) return;
      setSrc(URL.createObjectURL(blob));
      setState("ready");
    } catch (e) {
      setError(errorText(e));
      setState("failed");
    }
  };

  return (
    <section class="audio-player" aria-label="Listen to the report">
      <label>
        <span class="sr-only">Audio style</span>
        <select value={style} disabled={state === "making"} onChange={(e) => setStyle((e.target as HTMLSelectElement).value as api.AudioStyle)}>
          {STYLES.map((s) => (
            <option key={s.style} value={s.style}>
              {s.label}
            </option>
          ))}
        </select>
      </label>
      <button type="button" class="btn" disabled={state === "making"} onClick={() => void make()}>
        {state === "making" ? (
          <>
            <span class="spinner" aria-hidden="true" /> {makingLabel(progress)}
          </>
        ) : (
          "Listen"
        )}
      </button>
      {src ? <audio controls src={src} aria-label="Report audio" /> : null}
      {error ? (
        <p class="small notice-error" role="alert">
          {error}
        </p>
      ) : null}
    </section>
  );
}
