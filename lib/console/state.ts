import type { FormValues } from "./forms";

/** What a console form action answers; the form shows it (client component with useActionState). */
export type ActionState = {
  /** Increases with every answer, so that the form re-mounts with the values below. */
  seq: number;
  ok?: boolean;
  message?: string;
  /** Field errors by input name. */
  fields?: Record<string, string>;
  /** The submitted values, shown again after an error. */
  values?: FormValues;
  /** A secret shown once (client secret, PAT, private key), never stored or shown again. */
  secret?: { label: string; value: string; filename?: string };
  /** Where to go next (e.g. the created application). */
  next?: { href: string; label: string };
};

export const INITIAL_STATE: ActionState = { seq: 0 };
