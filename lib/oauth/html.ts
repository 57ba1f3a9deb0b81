import { createHash } from "node:crypto";

/**
 * Small self-contained HTML documents that the authorization endpoint serves itself (its error
 * page and the form_post response). Their CSP allows exactly their own inline style and script,
 * by hash, and nothing else.
 */

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);
}

const hash = (s: string) => `'sha256-${createHash("sha256").update(s, "utf8").digest("base64")}'`;

export type Theme = { primaryColor: string; backgroundColor: string; darkMode: "light" | "dark" | "auto" };

const CSS_COLOR = /^#[0-9a-fA-F]{3,8}$/;

export function baseStyle(theme: Theme): string {
  const brand = CSS_COLOR.test(theme.primaryColor) ? theme.primaryColor : "#c2410c";
  const bg = CSS_COLOR.test(theme.backgroundColor) ? theme.backgroundColor : "#fafaf9";
  const dark = `--bg:#0c0a09;--surface:#1c1917;--text:#f5f5f4;--muted:#a8a29e;--border:#292524;color-scheme:dark;`;
  return [
    `:root{--brand:${brand};--bg:${bg};--surface:#fff;--text:#1c1917;--muted:#57534e;--border:#e7e5e4;color-scheme:light}`,
    theme.darkMode === "dark" ? `:root{${dark}}` : "",
    theme.darkMode === "auto" ? `@media (prefers-color-scheme:dark){:root{${dark}}}` : "",
    `*{box-sizing:border-box}body{margin:0;min-height:100vh;display:grid;place-items:center;padding:24px 16px;`,
    `font-family:system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans","Liberation Sans",Arial,sans-serif;background:var(--bg);color:var(--text);line-height:1.5}`,
    `main{width:100%;max-width:440px;background:var(--surface);border:1px solid var(--border);border-radius:12px;padding:32px 28px;`,
    `box-shadow:0 1px 2px rgb(0 0 0/.04),0 8px 24px rgb(0 0 0/.06)}h1{font-size:1.4rem;margin:0 0 8px}p{color:var(--muted);margin:0 0 16px}`,
    `code{font-size:.85em;word-break:break-all}button{font:inherit;font-weight:600;padding:10px 16px;border-radius:8px;border:0;`,
    `background:var(--brand);color:#fff;cursor:pointer;width:100%}`,
  ].join("");
}

export function htmlResponse(opts: {
  status: number;
  lang: string;
  title: string;
  body: string;
  style: string;
  script?: string;
  formAction?: string;
  headers?: Record<string, string>;
}): Response {
  const csp = [
    "default-src 'none'",
    `style-src ${hash(opts.style)}`,
    opts.script ? `script-src ${hash(opts.script)}` : "script-src 'none'",
    `form-action ${opts.formAction ?? "'none'"}`,
    "base-uri 'none'",
    "frame-ancestors 'none'",
  ].join("; ");
  const html =
    `<!doctype html><html lang="${escapeHtml(opts.lang)}"><head><meta charset="utf-8">` +
    `<meta name="viewport" content="width=device-width,initial-scale=1"><meta name="robots" content="noindex">` +
    `<title>${escapeHtml(opts.title)}</title><style>${opts.style}</style></head><body>${opts.body}` +
    (opts.script ? `<script>${opts.script}</script>` : "") +
    `</body></html>`;
  return new Response(html, {
    status: opts.status,
    headers: {
      "Content-Type": "text/html; charset=utf-8",
      "Cache-Control": "no-store",
      Pragma: "no-cache",
      "Content-Security-Policy": csp,
      "X-Frame-Options": "DENY",
      "X-Content-Type-Options": "nosniff",
      "Referrer-Policy": "no-referrer",
      ...opts.headers,
    },
  });
}
