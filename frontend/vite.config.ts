/// <reference types="vitest/config" />
import { defineConfig, type Plugin } from "vite";
import preact from "@preact/preset-vite";

// Defence in depth for the built app: even if some markup slipped past sanitising, no
// inline or foreign script could run and nothing could be loaded from elsewhere. Build
// only, because the dev server injects inline scripts for hot reload.
const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "media-src 'self' blob:", // the report's audio, fetched with the token and played from a blob
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
].join("; ");

function contentSecurityPolicy(): Plugin {
  return {
    name: "sleuth-csp",
    apply: "build",
    transformIndexHtml: (html) =>
      html.replace(
        '<meta charset="UTF-8" />',
        `<meta charset="UTF-8" />\n    <meta http-equiv="Content-Security-Policy" content="${CSP}" />`,
      ),
  };
}

// The backend (`sleuth serve`) listens on 8000 and serves the built `dist/` at `/`;
// in development Vite serves the UI and forwards the API (including SSE) to it.
export default defineConfig({
  plugins: [preact(), contentSecurityPolicy()],
  base: "/",
  server: {
    proxy: {
      "/api": { target: "http://127.0.0.1:8000", changeOrigin: false },
    },
  },
  build: {
    outDir: "dist",
    emptyOutDir: true,
    sourcemap: true,
  },
  test: {
    environment: "jsdom",
    include: ["test/**/*.test.{ts,tsx}"],
    // One jsdom for every file: building it again for each file was most of the run. The tests own
    // no module state between files (each renders into its own container and cleans up).
    isolate: false,
    // A ceiling for a test that hangs, not a speed check: on a loaded two-core machine a jsdom
    // component test can take seconds (vitest's default ceiling is 5 s).
    testTimeout: 60_000,
  },
});
