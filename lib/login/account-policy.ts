import type { AccountPolicy } from "@/db/schema";

/** The account policy with the defaults of fields added since the settings row was written. */
export function accountPolicyOf(s: { accountPolicy: AccountPolicy }): Required<AccountPolicy> {
  return { emailVerification: "optional", registrationNames: "required", mfa: "optional", ...s.accountPolicy };
}
