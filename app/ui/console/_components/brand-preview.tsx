"use client";

import { useTranslations } from "next-intl";
import { useState } from "react";
import { contrastColor } from "@/lib/login/branding";
import { useConsoleFormState } from "./form";

type Brand = { productName: string; primaryColor: string; backgroundColor: string; darkMode: string; logoUrl: string | null };

const HEX = /^#[0-9a-fA-F]{6}$/;

/** The branding inputs with a live preview of the login page as they change. */
export function BrandingFields({ initial, darkModes }: { initial: Brand; darkModes: { value: string; label: string }[] }) {
  const t = useTranslations("console.branding");
  const state = useConsoleFormState();
  const v = state.values && !state.ok ? state.values : undefined;
  const [b, setB] = useState<Brand>({
    ...initial,
    ...(v
      ? {
          productName: String(v.productName ?? initial.productName),
          primaryColor: String(v.primaryColor ?? initial.primaryColor),
          backgroundColor: String(v.backgroundColor ?? initial.backgroundColor),
          darkMode: String(v.darkMode ?? initial.darkMode),
        }
      : {}),
  });
  const [logo, setLogo] = useState<string | null>(initial.logoUrl);
  const err = (n: string) => state.fields?.[n];
  const set = (k: keyof Brand) => (e: React.ChangeEvent<HTMLInputElement | HTMLSelectElement>) => {
    setB({ ...b, [k]: e.target.value });
  };
  const dark = b.darkMode === "dark";
  const bg = dark ? "#0c0a09" : HEX.test(b.backgroundColor) ? b.backgroundColor : "#fafaf9";
  const error = (n: string) =>
    err(n) ? (
      <p className="error" id={`${n}-error`}>
        {err(n)}
      </p>
    ) : null;
  return (
    <div className="brand-editor">
      <div className="brand-inputs">
        <div className="field">
          <label htmlFor="productName">{t("productName")}</label>
          <input id="productName" name="productName" value={b.productName} onChange={set("productName")} aria-invalid={err("productName") ? true : undefined} aria-describedby={err("productName") ? "productName-error" : undefined} />
          {error("productName")}
        </div>
        <div className="field-row">
          <div className="field">
            <label htmlFor="primaryColor">{t("primaryColor")}</label>
            <div className="color-input">
              <input type="color" aria-label={t("primaryColor")} value={HEX.test(b.primaryColor) ? b.primaryColor : "#000000"} onChange={set("primaryColor")} tabIndex={-1} />
              <input id="primaryColor" name="primaryColor" className="mono" value={b.primaryColor} onChange={set("primaryColor")} aria-invalid={err("primaryColor") ? true : undefined} aria-describedby={err("primaryColor") ? "primaryColor-error" : undefined} />
            </div>
            {error("primaryColor")}
          </div>
          <div className="field">
            <label htmlFor="backgroundColor">{t("backgroundColor")}</label>
            <div className="color-input">
              <input type="color" aria-label={t("backgroundColor")} value={HEX.test(b.backgroundColor) ? b.backgroundColor : "#ffffff"} onChange={set("backgroundColor")} tabIndex={-1} />
              <input id="backgroundColor" name="backgroundColor" className="mono" value={b.backgroundColor} onChange={set("backgroundColor")} aria-invalid={err("backgroundColor") ? true : undefined} aria-describedby={err("backgroundColor") ? "backgroundColor-error" : undefined} />
            </div>
            {error("backgroundColor")}
          </div>
        </div>
        <div className="field">
          <label htmlFor="darkMode">{t("darkMode")}</label>
          <select id="darkMode" name="darkMode" value={b.darkMode} onChange={set("darkMode")}>
            {darkModes.map((m) => (
              <option key={m.value} value={m.value}>
                {m.label}
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor="logo">{t("logo")}</label>
          <input
            id="logo"
            name="logo"
            type="file"
            accept="image/png,image/jpeg,image/svg+xml,image/webp"
            aria-describedby="logo-hint"
            onChange={(e) => {
              const f = e.target.files?.[0];
              if (!f) {
                setLogo(initial.logoUrl);
                return;
              }
              // A data: URL, not a blob: one: the page CSP allows images from 'self' and data: only.
              const reader = new FileReader();
              reader.onload = () => {
                setLogo(typeof reader.result === "string" ? reader.result : null);
              };
              reader.readAsDataURL(f);
            }}
          />
          <p className="hint" id="logo-hint">
            {t("logoHint")}
          </p>
          {error("logo")}
          {initial.logoUrl ? (
            <label className="check">
              <input type="checkbox" name="removeLogo" onChange={(e) => {
                  setLogo(e.target.checked ? null : initial.logoUrl);
                }}
              />
              <span>{t("removeLogo")}</span>
            </label>
          ) : null}
        </div>
      </div>
      <figure className="brand-preview" aria-label={t("preview")}>
        <figcaption>{t("preview")}</figcaption>
        <div className="preview-stage" style={{ background: bg }} data-testid="brand-preview">
          <div className={`preview-card${dark ? " preview-dark" : ""}`}>
            <div className="preview-brand">
              {logo ? (
                // eslint-disable-next-line @next/next/no-img-element
                <img src={logo} alt="" height={24} />
              ) : (
                <span className="preview-mark" style={{ background: b.primaryColor, color: contrastColor(b.primaryColor) }}>
                  {(b.productName || "T").slice(0, 1).toUpperCase()}
                </span>
              )}
              <span>{b.productName || "Torii"}</span>
            </div>
            <p className="preview-title">{t("previewTitle")}</p>
            <span className="preview-input" />
            <span className="preview-button" style={{ background: b.primaryColor, color: contrastColor(b.primaryColor) }}>
              {t("previewButton")}
            </span>
          </div>
        </div>
      </figure>
    </div>
  );
}
