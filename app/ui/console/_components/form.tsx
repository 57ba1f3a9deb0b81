"use client";

import { useTranslations } from "next-intl";
import { createContext, useActionState, useContext, useState } from "react";
import { INITIAL_STATE, type ActionState } from "@/lib/console/state";

type Action = (prev: ActionState, form: FormData) => Promise<ActionState>;
const Ctx = createContext<ActionState>(INITIAL_STATE);

/**
 * A console form: posts to a server action with the CSRF token, shows the API's answer (a
 * message, field errors next to their inputs, a secret once) and keeps what was typed after an
 * error. Without JavaScript the form still posts and the page shows the result.
 */
export function ConsoleForm({
  action,
  csrf,
  submitLabel,
  children,
  hideOnSuccess = false,
  danger = false,
  inline = false,
  encType,
  className,
}: {
  action: Action;
  csrf: string;
  submitLabel: string;
  children?: React.ReactNode;
  hideOnSuccess?: boolean;
  danger?: boolean;
  inline?: boolean;
  encType?: "multipart/form-data";
  className?: string;
}) {
  const [state, formAction, pending] = useActionState(action, INITIAL_STATE);
  const t = useTranslations("console");
  const done = hideOnSuccess && state.ok;
  return (
    <Ctx.Provider value={state}>
      {state.message ? (
        <div className={`alert ${state.ok ? "alert-ok" : "alert-error"}`} role={state.ok ? "status" : "alert"}>
          {state.message}
        </div>
      ) : null}
      {state.secret ? <SecretPanel {...state.secret} /> : null}
      {state.next ? (
        <p>
          <a className="btn btn-secondary" href={state.next.href}>
            {state.next.label}
          </a>
        </p>
      ) : null}
      {done ? null : (
        <form action={formAction} className={className ?? (inline ? "inline-form" : "console-form")} encType={encType} noValidate>
          <input type="hidden" name="csrf" value={csrf} />
          <div key={state.seq} className={inline ? "inline-fields" : "form-fields"}>
            {children}
          </div>
          <div className={inline ? "" : "form-actions"}>
            <button type="submit" className={`btn ${danger ? "btn-danger" : inline ? "btn-secondary" : "btn-primary btn-auto"}`} disabled={pending}>
              {pending ? t("common.working") : submitLabel}
            </button>
          </div>
        </form>
      )}
    </Ctx.Provider>
  );
}

export function useConsoleFormState(): ActionState {
  return useContext(Ctx);
}

function useField(name: string) {
  const state = useContext(Ctx);
  return { error: state.fields?.[name], submitted: state.values && !state.ok ? state.values[name] : undefined, state };
}

/** The ids of a field's hint and error, for `aria-describedby`. */
function describedBy(name: string, hint?: string, error?: string): string | undefined {
  return [hint ? `${name}-hint` : "", error ? `${name}-error` : ""].filter(Boolean).join(" ") || undefined;
}

/** What follows an input: its hint, then its error. */
function FieldFoot({ name, hint, error }: { name: string; hint?: string; error?: string }) {
  return (
    <>
      {hint ? (
        <p className="hint" id={`${name}-hint`}>
          {hint}
        </p>
      ) : null}
      <FieldError name={name} error={error} />
    </>
  );
}

function FieldError({ name, error }: { name: string; error?: string }) {
  return error ? (
    <p className="error" id={`${name}-error`}>
      {error}
    </p>
  ) : null;
}

type FieldProps = {
  name: string;
  label: string;
  hint?: string;
  defaultValue?: string | number | null;
  type?: "text" | "email" | "number" | "password" | "url" | "date" | "tel";
  multiline?: boolean;
  rows?: number;
  mono?: boolean;
  required?: boolean;
  placeholder?: string;
  autoComplete?: string;
};

export function Field({ name, label, hint, defaultValue, type = "text", multiline, rows = 3, mono, required, placeholder, autoComplete }: FieldProps) {
  const { error, submitted } = useField(name);
  const value = submitted !== undefined ? String(submitted) : (defaultValue ?? "").toString();
  const common = {
    id: name,
    name,
    defaultValue: type === "password" ? undefined : value,
    "aria-invalid": error ? true : undefined,
    "aria-describedby": describedBy(name, hint, error),
    required,
    placeholder,
    className: mono ? "mono" : undefined,
  };
  return (
    <div className="field">
      <label htmlFor={name}>
        {label}
        {required ? <span aria-hidden="true"> *</span> : null}
      </label>
      {multiline ? <textarea rows={rows} spellCheck={false} {...common} /> : <input type={type} autoComplete={autoComplete ?? "off"} {...common} />}
      <FieldFoot name={name} hint={hint} error={error} />
    </div>
  );
}

export function Select({
  name,
  label,
  options,
  defaultValue,
  hint,
}: {
  name: string;
  label: string;
  options: { value: string; label: string }[];
  defaultValue?: string;
  hint?: string;
}) {
  const { error, submitted } = useField(name);
  const value = submitted !== undefined ? String(submitted) : defaultValue;
  return (
    <div className="field">
      <label htmlFor={name}>{label}</label>
      <select id={name} name={name} defaultValue={value} aria-invalid={error ? true : undefined} aria-describedby={describedBy(name, hint, error)}>
        {options.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
      <FieldFoot name={name} hint={hint} error={error} />
    </div>
  );
}

/** A group of check boxes sharing one name (an array field), or one box (`options` of one). */
export function Checks({
  name,
  legend,
  options,
  defaultValues = [],
  hint,
}: {
  name: string;
  legend: string;
  options: { value: string; label: string; hint?: string }[];
  defaultValues?: string[];
  hint?: string;
}) {
  const { error, submitted, state } = useField(name);
  const chosen =
    state.values && !state.ok ? ([] as string[]).concat(submitted ?? []) : defaultValues;
  return (
    <fieldset className="field checks" aria-describedby={error ? `${name}-error` : undefined}>
      <legend>{legend}</legend>
      {options.map((o) => (
        <label key={o.value} className="check">
          <input type="checkbox" name={name} value={o.value} defaultChecked={chosen.includes(o.value)} />
          <span>
            {o.label}
            {o.hint ? <span className="hint"> {o.hint}</span> : null}
          </span>
        </label>
      ))}
      {hint ? <p className="hint">{hint}</p> : null}
      <FieldError name={name} error={error} />
    </fieldset>
  );
}

/** One check box whose unticked state is sent as well (value "on" when ticked). */
/** One choice of a few, as radio buttons in a fieldset (the submitted value is kept after an error). */
export function Radios({
  name,
  legend,
  options,
  defaultValue,
}: {
  name: string;
  legend: string;
  options: { value: string; label: string }[];
  defaultValue: string;
}) {
  const { error, submitted, state } = useField(name);
  const chosen = state.values && !state.ok && typeof submitted === "string" ? submitted : defaultValue;
  return (
    <fieldset className="field checks" aria-describedby={error ? `${name}-error` : undefined}>
      <legend>{legend}</legend>
      {options.map((o) => (
        <label key={o.value} className="check">
          <input type="radio" name={name} value={o.value} defaultChecked={chosen === o.value} />
          <span>{o.label}</span>
        </label>
      ))}
      <FieldError name={name} error={error} />
    </fieldset>
  );
}

export function Checkbox({ name, label, defaultChecked, hint }: { name: string; label: string; defaultChecked?: boolean; hint?: string }) {
  const { error, submitted, state } = useField(name);
  const checked = state.values && !state.ok ? submitted === "on" : !!defaultChecked;
  return (
    <div className="field">
      <label className="check">
        <input type="checkbox" name={name} id={name} defaultChecked={checked} aria-describedby={error ? `${name}-error` : undefined} />
        <span>
          {label}
          {hint ? <span className="hint block">{hint}</span> : null}
        </span>
      </label>
      <FieldError name={name} error={error} />
    </div>
  );
}

export function Hidden({ name, value }: { name: string; value: string }) {
  return <input type="hidden" name={name} value={value} />;
}

/** A secret shown once: copy button, and a download for key files. */
function SecretPanel({ label, value, filename }: { label: string; value: string; filename?: string }) {
  const t = useTranslations("console");
  return (
    <div className="secret-panel" role="region" aria-label={label}>
      <p className="secret-title">{label}</p>
      <p className="hint">{t("common.secretOnce")}</p>
      {filename ? (
        <pre className="secret-value" data-testid="secret-value">
          {value}
        </pre>
      ) : (
        <code className="secret-value" data-testid="secret-value">
          {value}
        </code>
      )}
      <div className="secret-actions">
        <CopyButton value={value} />
        {filename ? (
          <a className="btn btn-secondary" download={filename} href={`data:application/json;charset=utf-8,${encodeURIComponent(value)}`}>
            {t("common.download")}
          </a>
        ) : null}
      </div>
    </div>
  );
}

export function CopyButton({ value }: { value: string }) {
  const t = useTranslations("console");
  const [copied, setCopied] = useState(false);
  return (
    <button
      type="button"
      className="btn btn-secondary"
      onClick={() => {
        void navigator.clipboard.writeText(value).then(() => {
          setCopied(true);
          setTimeout(() => {
            setCopied(false);
          }, 2000);
        });
      }}
    >
      {copied ? t("common.copied") : t("common.copy")}
    </button>
  );
}
