import { useEffect, useRef, useState } from "preact/hooks";
import { errorText } from "../format";
import { uploadFile } from "../api";

interface Item {
  file: File;
  progress: number;
  state: "waiting" | "uploading" | "done" | "error";
  error?: string;
}

const ACCEPT = ".md,.markdown,.txt,.text,.rst,.html,.htm,.pdf";
const NAME = /^[a-z0-9][a-z0-9._-]{0,62}$/;

/** Add files to a collection: drop or choose them, pick or name the collection, watch each file. */
export function Uploads({ collections, onClose }: { collections: string[]; onClose: () => void }) {
  const [collection, setCollection] = useState("uploads");
  const [items, setItems] = useState<Item[]>([]);
  const [over, setOver] = useState(false);
  const [running, setRunning] = useState(false);
  const dialogRef = useRef<HTMLDialogElement>(null);

  useEffect(() => {
    const d = dialogRef.current;
    if (d && !d.open) {
      if (typeof d.showModal === "function") d.showModal();
      else d.setAttribute("open", "");
    }
  }, []);

  const add = (files: FileList | null) => {
    if (!files) return;
    setItems((old) => [...old, ...Array.from(files).map((file) => ({ file, progress: 0, state: "waiting" as const }))]);
  };
  const update = (index: number, change: Partial<Item>) => setItems((old) => old.map((it, i) => (i === index ? { ...it, ...change } : it)));

  const validName = NAME.test(collection);
  const start = async () => {
    if (!validName || running) return;
    setRunning(true);
    // One request per file: each gets its own progress and its own error, and a refused file
    // leaves the others (and the collection) as they were.
    for (let i = 0; i < items.length; i++) {
      if (items[i].state === "done") continue;
      update(i, { state: "uploading", progress: 0, error: undefined });
      try {
        await uploadFile(collection, items[i].file, (p) => update(i, { progress: p }));
        update(i, { state: "done", progress: 1 });
      } catch (e) {
        update(i, { state: "error", error: errorText(e) });
      }
    }
    setRunning(false);
  };

  return (
    <dialog class="uploads" ref={dialogRef} aria-labelledby="uploads-title" onClose={onClose}>
      <h2 id="uploads-title">Add files to a collection</h2>
      <label class="uploads-collection">
        Collection
        <input
          list="uploads-collections"
          value={collection}
          onInput={(e) => setCollection((e.currentTarget as HTMLInputElement).value.trim().toLowerCase())}
          aria-invalid={!validName}
        />
        <datalist id="uploads-collections">
          {collections.map((c) => (
            <option key={c} value={c} />
          ))}
        </datalist>
      </label>
      {!validName ? <p class="notice notice-error small">Use lower-case letters, digits, “.”, “_” and “-”.</p> : null}
      <label
        class={`dropzone ${over ? "over" : ""}`}
        onDragOver={(e) => {
          e.preventDefault();
          setOver(true);
        }}
        onDragLeave={() => setOver(false)}
        onDrop={(e) => {
          e.preventDefault();
          setOver(false);
          add(e.dataTransfer?.files ?? null);
        }}
      >
        Drop md, txt, html or pdf files here, or <u>choose files</u>
        <input type="file" multiple accept={ACCEPT} class="sr-only" onChange={(e) => add((e.currentTarget as HTMLInputElement).files)} />
      </label>
      {items.length ? (
        <ul class="upload-list">
          {items.map((it, i) => (
            <li key={i} class={`upload-item ${it.state}`}>
              <span class="upload-name">{it.file.name}</span>
              <progress max={1} value={it.progress} aria-label={`${it.file.name} upload progress`} />
              <span class="upload-state small">{it.state === "error" ? it.error : it.state === "done" ? "added" : it.state}</span>
            </li>
          ))}
        </ul>
      ) : null}
      <div class="uploads-actions">
        <button type="button" class="btn btn-ghost" onClick={() => dialogRef.current?.close()}>
          Close
        </button>
        <button type="button" class="btn btn-primary" disabled={!validName || running || !items.some((it) => it.state !== "done")} onClick={start}>
          {running ? "Uploading…" : "Upload"}
        </button>
      </div>
    </dialog>
  );
}
