import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { BASE_URL } from "./support";

// A single-page app for the browser tests, with the real oidc-client-ts: one page whose script
// sets up `window.mgr` against Torii and finishes the app's own callbacks, served by a small
// server on a port of its own.

const LIBRARY = fs.readFileSync("node_modules/oidc-client-ts/dist/browser/oidc-client-ts.min.js", "utf8");

/**
 * The page: `settings` are more UserManager settings as JavaScript source (after authority and
 * client_id), `callbacks` the script that handles the app's callback paths.
 */
export function spaPage(clientId: string, settings: string, callbacks: string): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>SPA</title>
<script src="/oidc-client-ts.min.js"></script>
<script>
  window.mgr = new oidc.UserManager({
    authority: ${JSON.stringify(BASE_URL)},
    client_id: ${JSON.stringify(clientId)},
    ${settings}
  });
  ${callbacks}
</script></head><body data-result="">SPA</body></html>`;
}

/** Serves `page()` on every path but the library's, on 127.0.0.1 (also reachable as localhost). */
export async function serveSpa(page: () => string): Promise<{ port: number; origin: string; close: () => Promise<void> }> {
  const server = http.createServer((req, res) => {
    if (req.url === "/oidc-client-ts.min.js") {
      res.writeHead(200, { "content-type": "text/javascript" }).end(LIBRARY);
      return;
    }
    if (req.url === "/favicon.ico") {
      res.writeHead(204).end();
      return;
    }
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(page());
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    origin: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => { r(); });
      }),
  };
}
