import { useEffect, useState } from "preact/hooks";

/** The session id in the URL (#/s/<id>), so a reload or a shared link reopens it. */
export function useHashSession(): [string | null, (id: string | null) => void] {
  const read = () => {
    const m = /^#\/s\/([^/?#]+)/.exec(window.location.hash);
    return m ? decodeURIComponent(m[1]) : null;
  };
  const [id, setId] = useState<string | null>(read);
  useEffect(() => {
    const on = () => setId(read());
    window.addEventListener("hashchange", on);
    return () => window.removeEventListener("hashchange", on);
  }, []);
  const navigate = (next: string | null) => {
    const hash = next ? `#/s/${encodeURIComponent(next)}` : "#/";
    if (window.location.hash !== hash) window.location.hash = hash;
    setId(next);
  };
  return [id, navigate];
}

/** Current time, ticking every second while `active`. */
export function useNow(active: boolean): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!active) return;
    const t = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(t);
  }, [active]);
  return now;
}
