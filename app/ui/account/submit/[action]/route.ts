import { withEngine } from "@torii/core/runtime";
import { handleAccountForm } from "@torii/core/account/handlers";

export const dynamic = "force-dynamic";

/** Every form of the account page posts here; the action is the last path segment. */
export async function POST(request: Request, { params }: { params: Promise<{ action: string }> }) {
  const { action } = await params;
  return withEngine((inst, req) => handleAccountForm(inst, req, action))(request);
}
