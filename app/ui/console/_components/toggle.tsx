"use client";

import { useActionState, useRef } from "react";
import { INITIAL_STATE, type ActionState } from "@/lib/console/state";

type Action = (prev: ActionState, form: FormData) => Promise<ActionState>;

/** A labelled switch saved as soon as it changes (the feature toggles). */
export function FeatureToggle({
  action,
  csrf,
  feature,
  enabled,
  label,
  description,
  savedLabel,
  saveLabel,
}: {
  action: Action;
  csrf: string;
  feature: string;
  enabled: boolean;
  label: string;
  description: string;
  savedLabel: string;
  saveLabel: string;
}) {
  const [state, formAction, pending] = useActionState(action, INITIAL_STATE);
  const form = useRef<HTMLFormElement>(null);
  const id = `feature-${feature}`;
  return (
    <form ref={form} action={formAction} className="toggle-row">
      <input type="hidden" name="csrf" value={csrf} />
      <input type="hidden" name="feature" value={feature} />
      <input type="hidden" name="enabled" value="false" />
      <div className="toggle-text">
        <label htmlFor={id} className="toggle-label">
          {label}
        </label>
        <p className="hint" id={`${id}-desc`}>
          {description}
        </p>
      </div>
      <span className="toggle-status" role="status" aria-live="polite">
        {pending ? "…" : state.ok ? savedLabel : state.message ?? ""}
      </span>
      <input
        id={id}
        type="checkbox"
        role="switch"
        className="switch"
        name="enabled"
        value="true"
        defaultChecked={enabled}
        aria-describedby={`${id}-desc`}
        onChange={() => form.current?.requestSubmit()}
      />
      {/* Without JavaScript the switch cannot save itself: the form posts the server action. */}
      <noscript>
        <button type="submit" className="btn btn-small">
          {saveLabel}
        </button>
      </noscript>
    </form>
  );
}
