import type { Caches } from "@/lib/store/caches";
import type { Logger } from "@/lib/log";
import type { Actor } from "@/lib/store/audit";
import type { Client } from "@/lib/store/clients";
import type { Store } from "@/lib/store/repositories";
import type { Settings } from "@/lib/store/settings";
import type { ClientAuthMethod } from "../client-auth";
import type { Form } from "../form";
import type { HttpRequest } from "@/lib/http/request";

/** What a grant handler gets: the parsed request, the authenticated client (if any) and the instance. */
export type GrantRequest = {
  request: HttpRequest;
  form: Form;
  store: Store;
  /** Derives refresh token successors (refresh-successor.ts). */
  masterKey: Buffer;
  issuer: string;
  caches: Caches;
  log: Logger;
  settings: Settings;
  /** Null only for grants whose client authentication is optional (jwt-bearer without credentials). */
  client: Client | null;
  audit: Actor;
};

/** The RFC 6749 5.1 / RFC 8693 2.2.1 success body. */
export type TokenResponse = {
  access_token: string;
  token_type: "Bearer" | "N_A";
  expires_in?: number;
  scope?: string;
  id_token?: string;
  refresh_token?: string;
  issued_token_type?: string;
};

export type Grant = {
  type: string;
  /** Client authentication methods this grant accepts (spec 5, per-endpoint table); `optional` when none is required. */
  clientAuth: readonly ClientAuthMethod[] | "optional";
  /** An instance feature that must be on for this grant to exist. */
  feature?: "tokenExchange";
  handle(g: GrantRequest): Promise<TokenResponse>;
};
