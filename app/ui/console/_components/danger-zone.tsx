import type { ActionState } from "@torii/core/console/state";
import { ConsoleForm, Hidden } from "./form";
import { Section } from "./ui";

/** The last section of a detail page: delete, behind a confirmation that names what goes. */
export function DangerZone({
  texts,
  action,
  csrf,
  field,
}: {
  texts: { title: string; text: string; open: string; confirm: string; submit: string };
  action: (prev: ActionState, form: FormData) => Promise<ActionState>;
  csrf: string;
  /** The hidden field that names what to delete. */
  field: { name: string; value: string };
}) {
  return (
    <Section title={texts.title} description={texts.text} id="danger">
      <details className="confirm">
        <summary className="btn btn-danger-outline">{texts.open}</summary>
        <div className="confirm-body">
          <p>{texts.confirm}</p>
          <ConsoleForm action={action} csrf={csrf} submitLabel={texts.submit} danger inline>
            <Hidden name={field.name} value={field.value} />
          </ConsoleForm>
        </div>
      </details>
    </Section>
  );
}
