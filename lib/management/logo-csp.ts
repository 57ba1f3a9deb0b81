/**
 * A logo may be an SVG uploaded by an administrator. Opened directly it is a document, so it
 * gets a policy under which nothing runs, loads or frames it: only its own inline styles.
 * Its own module so that next.config.ts can apply it without loading the server code.
 */
export const LOGO_CSP = "default-src 'none'; style-src 'unsafe-inline'; sandbox; frame-ancestors 'none'";
