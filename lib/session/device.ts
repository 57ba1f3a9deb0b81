import Bowser from "bowser";

/**
 * What a session's User-Agent says, in words a person recognises: the browser's and the system's
 * names ("Firefox", "Windows"), without versions, which change with every update and would make
 * one browser look like several. Either is null when the User-Agent does not tell (a script, an
 * empty or made-up header); the page says "unknown" for it in the reader's language.
 *
 * Bowser reads the header with a table of known browsers and systems: a header is what any
 * client says of itself, so this is a hint for the person, never something to decide on.
 */
export type Device = { browser: string | null; os: string | null };

export function describeDevice(userAgent: string | null | undefined): Device {
  if (!userAgent?.trim()) return { browser: null, os: null };
  const { browser, os } = Bowser.parse(userAgent);
  return { browser: browser.name || null, os: os.name || null };
}
