"use client";

import { useEffect, useRef, useState, useSyncExternalStore } from "react";
import {
  browserSupportsWebAuthn,
  browserSupportsWebAuthnAutofill,
  startAuthentication,
  startRegistration,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
} from "@simplewebauthn/browser";

// Whether this browser has WebAuthn never changes while the page is open. The server cannot
// know: it draws the form as "unknown" (below), and so does the browser while it hydrates.
type Support = "yes" | "no" | "unknown";
const noSubscription = () => () => undefined;
const browserSupport = (): Support => (browserSupportsWebAuthn() ? "yes" : "no");
const serverSupport = (): Support => "unknown";

/**
 * A passkey ceremony as a form: the server rendered the options (and kept their challenge), the
 * browser asks the authenticator, and the form posts its answer as JSON in `response`, so the
 * handler is an ordinary form handler (origin, CSRF, redirect). Without WebAuthn in the browser
 * (or without JavaScript) nothing is shown: the other ways to sign in stay.
 *
 * Until the page's script knows, the form is drawn invisible and inert (`passkey-pending`; inert
 * also keeps it from the keyboard and from screen readers), so that the centred card does not
 * jump by the button's height when it appears under a pointer that is already on "Continue" or
 * "Sign in" (e2e/layout-stability.spec.ts). Without a script the stylesheet removes it
 * (`scripting: none`).
 */
export function PasskeyForm({
  action,
  fields,
  options,
  mode,
  label,
  failed,
  autofill = false,
  secondary = true,
  children,
}: {
  action: string;
  fields: Record<string, string>;
  /** The options JSON from @simplewebauthn/server, as a string. */
  options: string;
  mode: "authenticate" | "register";
  label: string;
  /** What to say when the browser's prompt was cancelled or failed. */
  failed: string;
  /** Also offer the passkeys in the username field's autofill (conditional UI), where supported. */
  autofill?: boolean;
  secondary?: boolean;
  children?: React.ReactNode;
}) {
  const form = useRef<HTMLFormElement>(null);
  const response = useRef<HTMLInputElement>(null);
  const support = useSyncExternalStore(noSubscription, browserSupport, serverSupport);
  const [error, setError] = useState<string | null>(null);

  const submit = (answer: unknown) => {
    if (!response.current || !form.current) return;
    response.current.value = JSON.stringify(answer);
    form.current.requestSubmit();
  };

  useEffect(() => {
    if (!autofill || mode !== "authenticate") return;
    const state = { cancelled: false };
    void (async () => {
      if (!(await browserSupportsWebAuthnAutofill()) || state.cancelled) return;
      try {
        submit(await startAuthentication({ optionsJSON: JSON.parse(options) as PublicKeyCredentialRequestOptionsJSON, useBrowserAutofill: true }));
      } catch {
        // Autofill was aborted (the button started a prompt) or dismissed: nothing to say.
      }
    })();
    return () => {
      state.cancelled = true;
    };
  }, [autofill, mode, options]);

  const run = async () => {
    setError(null);
    try {
      submit(
        mode === "register"
          ? await startRegistration({ optionsJSON: JSON.parse(options) as PublicKeyCredentialCreationOptionsJSON })
          : await startAuthentication({ optionsJSON: JSON.parse(options) as PublicKeyCredentialRequestOptionsJSON }),
      );
    } catch {
      setError(failed);
    }
  };

  if (support === "no") return null;
  const pending = support === "unknown";
  return (
    <form ref={form} method="post" action={action} className={pending ? "passkey-form passkey-pending" : "passkey-form"} inert={pending}>
      {Object.entries(fields).map(([name, value]) => (
        <input key={name} type="hidden" name={name} value={value} />
      ))}
      <input ref={response} type="hidden" name="response" value="" />
      {children}
      {error ? (
        <div className="alert alert-error" role="alert">
          {error}
        </div>
      ) : null}
      <button type="button" className={`btn ${secondary ? "btn-secondary" : "btn-primary"}`} onClick={() => void run()}>
        {label}
      </button>
    </form>
  );
}
