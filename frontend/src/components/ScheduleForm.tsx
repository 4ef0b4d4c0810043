import type { ComponentChildren } from "preact";
import { useMemo, useState } from "preact/hooks";
import * as api from "../api";
import { errorText } from "../format";
import { browserZone, describeCron, describeInterval, fieldErrors, type FieldErrors, type FormField } from "../schedules";
import { SourcePicker } from "./SourcePicker";

const NOTIFY: { value: api.Notify; label: string }[] = [
  { value: "on_change", label: "Only when something changed" },
  { value: "always", label: "After every run" },
  { value: "never", label: "Never" },
];

/** `6h`, `30m`, `1h30m`, `2d` in seconds, for the hint under the field; null when it does not read as one. */
function intervalSeconds(text: string): number | null {
  const m = /^\s*(?:(\d+)d)?\s*(?:(\d+)h)?\s*(?:(\d+)m)?\s*(?:(\d+)s)?\s*$/i.exec(text);
  if (!m || !text.trim()) return null;
  const [d, h, min, s] = m.slice(1).map((x) => Number(x ?? 0));
  return d * 86400 + h * 3600 + min * 60 + s;
}

function zones(): string[] {
  try {
    return Intl.supportedValuesOf("timeZone");
  } catch {
    return [];
  }
}

/** A new schedule: question, cron or interval, time zone, sources, notify, webhook. The server checks it all. */
export function ScheduleForm({ onCreated, onCancel }: { onCreated: (s: api.CreatedSchedule) => void; onCancel: () => void }) {
  const [question, setQuestion] = useState("");
  const [kind, setKind] = useState<"cron" | "every">("cron");
  const [cron, setCron] = useState("0 7 * * 1-5");
  const [every, setEvery] = useState("6h");
  const [timezone, setTimezone] = useState(browserZone);
  const [sources, setSources] = useState<string[] | null>(null);
  const [notify, setNotify] = useState<api.Notify>("on_change");
  const [mode, setMode] = useState<api.Mode | "">("");
  const [webhookUrl, setWebhookUrl] = useState("");
  const [errors, setErrors] = useState<FieldErrors>({});
  const [busy, setBusy] = useState(false);
  const zoneList = useMemo(zones, []);

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setErrors({});
    try {
      const created = await api.createSchedule({
        question,
        cron: kind === "cron" ? cron : undefined,
        every: kind === "every" ? every : undefined,
        timezone,
        sources,
        mode: mode || undefined,
        notify,
        webhookUrl: webhookUrl.trim() || undefined,
      });
      onCreated(created);
    } catch (err) {
      setErrors(err instanceof api.ApiError && err.status === 422 ? fieldErrors(err.detail, err.message) : { form: errorText(err) });
    } finally {
      setBusy(false);
    }
  };

  const seconds = intervalSeconds(every);
  const hint = kind === "cron" ? describeCron(cron) : seconds ? `Every ${describeInterval(seconds)}` : "e.g. 6h, 30m, 1h30m";
  return (
    <form class="card schedule-form" aria-label="New schedule" onSubmit={submit} noValidate>
      <h2 class="card-title">New schedule</h2>
      <Field name="question" label="Question" error={errors.question}>
        <textarea
          id="schedule-question"
          rows={2}
          value={question}
          required
          aria-invalid={!!errors.question}
          aria-describedby={errors.question ? "schedule-question-error" : undefined}
          onInput={(e) => setQuestion(e.currentTarget.value)}
        />
      </Field>
      <fieldset class="schedule-timing">
        <legend>When</legend>
        <label class="radio">
          <input type="radio" name="timing" checked={kind === "cron"} onChange={() => setKind("cron")} /> On a cron expression
        </label>
        <label class="radio">
          <input type="radio" name="timing" checked={kind === "every"} onChange={() => setKind("every")} /> Every…
        </label>
        {kind === "cron" ? (
          <Field name="cron" label="Cron expression" error={errors.cron ?? errors.every} hint={hint}>
            <input
              id="schedule-cron"
              class="mono"
              value={cron}
              placeholder="0 7 * * 1-5"
              aria-invalid={!!errors.cron}
              aria-describedby={`schedule-cron-hint${errors.cron ? " schedule-cron-error" : ""}`}
              onInput={(e) => setCron(e.currentTarget.value)}
            />
          </Field>
        ) : (
          <Field name="every" label="Interval" error={errors.every ?? errors.cron} hint={hint}>
            <input
              id="schedule-every"
              value={every}
              placeholder="6h"
              aria-invalid={!!errors.every}
              aria-describedby={`schedule-every-hint${errors.every ? " schedule-every-error" : ""}`}
              onInput={(e) => setEvery(e.currentTarget.value)}
            />
          </Field>
        )}
        {kind === "cron" ? (
          <Field name="timezone" label="Time zone" error={errors.timezone} hint="The cron expression is read on this zone's clock.">
            <input
              id="schedule-timezone"
              list="schedule-zones"
              value={timezone}
              aria-invalid={!!errors.timezone}
              aria-describedby={`schedule-timezone-hint${errors.timezone ? " schedule-timezone-error" : ""}`}
              onInput={(e) => setTimezone(e.currentTarget.value)}
            />
            <datalist id="schedule-zones">
              {zoneList.map((z) => (
                <option key={z} value={z} />
              ))}
            </datalist>
          </Field>
        ) : null}
      </fieldset>
      <div class="field">
        <span class="field-label">Sources</span>
        <SourcePicker chosen={sources} onChange={setSources} disabled={busy} />
        {errors.sources ? <FieldError name="sources" text={errors.sources} /> : null}
      </div>
      <Field name="mode" label="Mode" error={errors.mode}>
        <select id="schedule-mode" value={mode} onChange={(e) => setMode(e.currentTarget.value as api.Mode | "")}>
          <option value="">The server's default</option>
          <option value="light">Light: quicker, fewer sources</option>
          <option value="heavy">Heavy: more agents, more sources</option>
        </select>
      </Field>
      <Field name="notify" label="Notify" error={errors.notify}>
        <select id="schedule-notify" value={notify} onChange={(e) => setNotify(e.currentTarget.value as api.Notify)}>
          {NOTIFY.map((n) => (
            <option key={n.value} value={n.value}>
              {n.label}
            </option>
          ))}
        </select>
      </Field>
      <Field name="webhook_url" label="Webhook URL (optional)" error={errors.webhook_url} hint="Each delivery is POSTed here, signed.">
        <input
          id="schedule-webhook_url"
          type="url"
          value={webhookUrl}
          placeholder="https://hooks.example.com/sleuth"
          aria-invalid={!!errors.webhook_url}
          aria-describedby={`schedule-webhook_url-hint${errors.webhook_url ? " schedule-webhook_url-error" : ""}`}
          onInput={(e) => setWebhookUrl(e.currentTarget.value)}
        />
      </Field>
      {errors.form ? (
        <p class="notice notice-error" role="alert">
          {errors.form}
        </p>
      ) : null}
      <div class="actions">
        <button type="submit" class="btn btn-primary" disabled={busy}>
          {busy ? "Saving…" : "Create schedule"}
        </button>
        <button type="button" class="btn btn-ghost" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

function Field({ name, label, error, hint, children }: { name: FormField; label: string; error?: string; hint?: string; children: ComponentChildren }) {
  return (
    <div class={`field ${error ? "field-invalid" : ""}`}>
      <label class="field-label" for={`schedule-${name}`}>
        {label}
      </label>
      {children}
      {hint ? (
        <span class="field-hint muted small" id={`schedule-${name}-hint`}>
          {hint}
        </span>
      ) : null}
      {error ? <FieldError name={name} text={error} /> : null}
    </div>
  );
}

function FieldError({ name, text }: { name: FormField; text: string }) {
  return (
    <span class="field-error" id={`schedule-${name}-error`} role="alert">
      <span aria-hidden="true">⚠</span> {text}
    </span>
  );
}
