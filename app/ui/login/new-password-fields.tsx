/**
 * The new password and its confirmation, as the reset and change-password forms ask for them
 * (autocomplete `new-password`, so password managers offer to generate and store one). `hint`
 * is shown under the first field and described by it while there is no error.
 */
export function NewPasswordFields({ label, confirmLabel, hint, error }: { label: string; confirmLabel: string; hint?: string; error: string | null }) {
  const describedBy = error ? "form-error" : hint ? "password-hint" : undefined;
  return (
    <>
      <div className="field">
        <label htmlFor="password">{label}</label>
        <input id="password" name="password" type="password" autoComplete="new-password" required autoFocus aria-invalid={error ? true : undefined} aria-describedby={describedBy} />
        {hint ? (
          <p className="hint" id="password-hint">
            {hint}
          </p>
        ) : null}
      </div>
      <div className="field">
        <label htmlFor="confirm">{confirmLabel}</label>
        <input id="confirm" name="confirm" type="password" autoComplete="new-password" required />
      </div>
    </>
  );
}
