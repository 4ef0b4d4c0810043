import { useState } from "preact/hooks";
import { getToken, setToken } from "../auth";

/** Asks for the server's API token (SLEUTH_API_TOKEN); saving it reloads the app with it. */
export function TokenPrompt({ onSaved }: { onSaved: () => void }) {
  const [value, setValue] = useState("");
  const hadToken = !!getToken();
  const save = (e: Event) => {
    e.preventDefault();
    const token = value.trim();
    if (!token) return;
    setToken(token);
    onSaved();
  };
  return (
    <div class="token-backdrop">
      <form class="card token-dialog" role="dialog" aria-modal="true" aria-labelledby="token-title" onSubmit={save}>
        <h2 id="token-title">{hadToken ? "That API token was not accepted" : "This Sleuth server needs an API token"}</h2>
        <p class="muted">Ask whoever runs the server for the value of SLEUTH_API_TOKEN. It is kept in this browser only.</p>
        <label for="api-token">API token</label>
        <input
          id="api-token"
          type="password"
          autoComplete="off"
          value={value}
          onInput={(e) => setValue((e.target as HTMLInputElement).value)}
          autoFocus
        />
        <button type="submit" class="btn btn-primary" disabled={!value.trim()}>
          Save and continue
        </button>
      </form>
    </div>
  );
}
