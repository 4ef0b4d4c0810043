import type { ComponentChildren } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import * as api from "../api";
import { errorText, formatDate, parseTime } from "../format";
import { Icon } from "./Icon";

/** The expiry choices offered, in days (null: never). */
export const EXPIRY_CHOICES: { label: string; days: number | null }[] = [
  { label: "30 days", days: 30 },
  { label: "90 days", days: 90 },
  { label: "1 year", days: 365 },
  { label: "Never", days: null },
];
const DEFAULT_EXPIRY = "90";

export interface KeysApi {
  list: () => Promise<api.ApiKey[]>;
  create: (name: string, expiresInDays: number | null) => Promise<api.NewApiKey>;
  remove: (id: string) => Promise<void>;
  copy: (text: string) => Promise<void>;
}

const serverKeys: KeysApi = {
  list: api.listKeys,
  create: api.createKey,
  remove: api.deleteKey,
  copy: (text) => (navigator.clipboard ? navigator.clipboard.writeText(text) : Promise.reject(new Error("no clipboard"))),
};

/** When a key stops working, as the list says it. */
export function expiryText(key: api.ApiKey, now: number): string {
  if (!key.expiresAt) return "Never";
  const at = parseTime(key.expiresAt);
  const when = formatDate(key.expiresAt, true);
  return at !== null && at <= now ? `Expired ${when}` : when;
}

/**
 * The caller's API keys: the list, a new key (shown once, to copy), and deleting one after a
 * confirmation. `children` go at the end of the page (the password form).
 */
export function ApiKeys({ keys = serverKeys, now = Date.now, children }: { keys?: KeysApi; now?: () => number; children?: ComponentChildren }) {
  const [list, setList] = useState<api.ApiKey[] | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);
  const [name, setName] = useState("");
  const [expiry, setExpiry] = useState(DEFAULT_EXPIRY);
  const [creating, setCreating] = useState(false);
  const [createError, setCreateError] = useState<string | null>(null);
  const [created, setCreated] = useState<api.NewApiKey | null>(null);
  const nameField = useRef<HTMLInputElement>(null);

  const reload = () =>
    keys
      .list()
      .then((found) => {
        setList(found);
        setLoadError(null);
      })
      .catch((e: unknown) => setLoadError(errorText(e)));
  useEffect(() => {
    void reload();
    document.title = "API keys · Sleuth";
  }, [keys]);

  const create = async (e: Event) => {
    e.preventDefault();
    if (!name.trim() || creating) return;
    setCreating(true);
    setCreateError(null);
    try {
      const made = await keys.create(name.trim(), expiry === "never" ? null : Number(expiry));
      setCreated(made);
      setName("");
      await reload();
    } catch (err) {
      setCreateError(errorText(err));
    } finally {
      setCreating(false);
    }
  };

  return (
    <section class="keys-page" aria-labelledby="keys-title">
      <div class="keys-head">
        <h1 id="keys-title">API keys</h1>
        <a class="btn btn-ghost" href="#/">
          Back to research
        </a>
      </div>
      <p class="muted">
        A key lets a script, a chat client (<code>/v1</code>) or an MCP host use Sleuth as you: it sees and changes your research. Send it
        as <code>Authorization: Bearer &lt;key&gt;</code>. Delete a key you no longer use; it stops working at once.
      </p>

      {created ? (
        <NewKey
          created={created}
          copy={keys.copy}
          onDone={() => {
            setCreated(null);
            nameField.current?.focus();
          }}
        />
      ) : null}

      <form class="card keys-create" aria-label="New API key" onSubmit={create}>
        <h2 class="card-title">New key</h2>
        <div class="keys-create-row">
          <label class="keys-field">
            <span>Name</span>
            <input
              ref={nameField}
              value={name}
              maxLength={100}
              placeholder="What it is for, e.g. laptop script"
              onInput={(e) => setName((e.target as HTMLInputElement).value)}
              required
            />
          </label>
          <label class="keys-field">
            <span>Expires after</span>
            <select value={expiry} onChange={(e) => setExpiry((e.target as HTMLSelectElement).value)}>
              {EXPIRY_CHOICES.map((c) => (
                <option key={c.label} value={c.days === null ? "never" : String(c.days)}>
                  {c.label}
                </option>
              ))}
            </select>
          </label>
          <button type="submit" class="btn btn-primary" disabled={creating || !name.trim()}>
            {creating ? "Creating…" : "Create key"}
          </button>
        </div>
        {createError ? (
          <p class="notice notice-error" role="alert">
            Could not create the key: {createError}
          </p>
        ) : null}
      </form>

      <h2 class="keys-list-title">Your keys</h2>
      {loadError ? (
        <p class="notice notice-error" role="alert">
          Could not load your keys: {loadError}
        </p>
      ) : null}
      {list && !list.length ? <p class="muted">No API keys yet.</p> : null}
      {list?.length ? (
        <table class="keys-table">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Created</th>
              <th scope="col">Expires</th>
              <th scope="col">Last used</th>
              <th scope="col">
                <span class="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {list.map((k) => (
              <KeyRow
                key={k.id}
                apiKey={k}
                now={now()}
                onDelete={async () => {
                  await keys.remove(k.id);
                  await reload();
                }}
              />
            ))}
          </tbody>
        </table>
      ) : null}
      {children}
    </section>
  );
}

/** The key just made, shown this once with a copy button and a warning. */
function NewKey({ created, copy, onDone }: { created: api.NewApiKey; copy: (text: string) => Promise<void>; onDone: () => void }) {
  const field = useRef<HTMLInputElement>(null);
  const [copied, setCopied] = useState<string>("");
  useEffect(() => {
    field.current?.focus();
    field.current?.select();
  }, [created.id]);
  const copyKey = async () => {
    try {
      await copy(created.key);
      setCopied("Copied to the clipboard.");
    } catch {
      // No clipboard (a page not served over https or from localhost): the key is selected to copy by hand.
      field.current?.focus();
      field.current?.select();
      setCopied("Could not copy by itself: the key is selected, press Ctrl+C (⌘C) to copy it.");
    }
  };
  return (
    <div class="card new-key" role="region" aria-labelledby="new-key-title">
      <h2 id="new-key-title" class="card-title">
        Your new key “{created.name}”
      </h2>
      <p class="notice notice-degraded">
        <span class="notice-icon" aria-hidden="true">
          ⚠
        </span>
        Copy this key now. It is shown only this once: the server keeps only its hash.
      </p>
      <div class="new-key-row">
        <input
          ref={field}
          class="new-key-value"
          readOnly
          value={created.key}
          aria-label="The new API key"
          onFocus={(e) => (e.target as HTMLInputElement).select()}
        />
        <button type="button" class="btn btn-primary" onClick={() => void copyKey()}>
          Copy
        </button>
      </div>
      <p class="small muted" role="status">
        {copied}
      </p>
      <button type="button" class="btn" onClick={onDone}>
        Done
      </button>
    </div>
  );
}

/** One key in the list; Delete asks first, and Escape (or Keep) leaves it be. */
function KeyRow({ apiKey, now, onDelete }: { apiKey: api.ApiKey; now: number; onDelete: () => Promise<void> }) {
  const [confirming, setConfirming] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const deleteButton = useRef<HTMLButtonElement>(null);
  const keepButton = useRef<HTMLButtonElement>(null);
  const wasConfirming = useRef(false);
  useEffect(() => {
    if (confirming) keepButton.current?.focus();
    else if (wasConfirming.current) deleteButton.current?.focus();
    wasConfirming.current = confirming;
  }, [confirming]);

  const remove = async () => {
    setBusy(true);
    setError(null);
    try {
      await onDelete();
    } catch (e) {
      setError(errorText(e));
      setBusy(false);
    }
  };
  return (
    <tr>
      <td class="key-name">{apiKey.name}</td>
      <td class="key-date" data-label="Created">
        {formatDate(apiKey.createdAt, true)}
      </td>
      <td class="key-date" data-label="Expires">
        {expiryText(apiKey, now)}
      </td>
      <td class="key-date" data-label="Last used">
        {apiKey.lastUsedAt ? formatDate(apiKey.lastUsedAt, true) : "Never used"}
      </td>
      <td class="key-actions">
        {confirming ? (
          <div
            class="key-confirm"
            role="group"
            aria-label={`Delete the key ${apiKey.name}?`}
            onKeyDown={(e) => {
              if (e.key !== "Escape") return;
              e.preventDefault();
              setConfirming(false);
            }}
          >
            <span class="small">Scripts using it stop working at once.</span>
            <button type="button" class="btn btn-danger" disabled={busy} onClick={() => void remove()}>
              Delete
            </button>
            <button type="button" class="btn btn-ghost" ref={keepButton} onClick={() => setConfirming(false)}>
              Keep
            </button>
          </div>
        ) : (
          <button
            type="button"
            class="btn btn-ghost"
            ref={deleteButton}
            aria-label={`Delete the key ${apiKey.name}`}
            onClick={() => {
              setError(null);
              setConfirming(true);
            }}
          >
            <Icon name="trash" /> Delete
          </button>
        )}
        {error ? (
          <p class="small notice-error" role="alert">
            {error}
          </p>
        ) : null}
      </td>
    </tr>
  );
}
