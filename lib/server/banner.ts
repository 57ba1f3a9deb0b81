import path from "node:path";

/**
 * The lines `npm start` prints once listening. They name where the administrator's credentials
 * are stored, never the credentials themselves: stdout ends up in log collectors.
 */
export function startupBanner(opts: {
  issuer: string;
  database: string;
  dataDir: string;
  firstStart: boolean;
  adminPatFromEnv: boolean;
  /** IDP_WORKERS: shown when more than one process serves. */
  workers?: number;
  exists: (file: string) => boolean;
}): string {
  const pwFile = path.join(opts.dataDir, "admin-password");
  const patFile = path.join(opts.dataDir, "admin.pat");
  const lines = [
    "",
    `  Torii is running.`,
    `  Issuer:       ${opts.issuer}`,
    `  Discovery:    ${opts.issuer}/.well-known/openid-configuration`,
    `  Database:     ${opts.database}`,
  ];
  if ((opts.workers ?? 1) > 1) lines.push(`  Workers:      ${opts.workers} processes sharing the port (IDP_WORKERS)`);
  if (opts.firstStart) {
    lines.push(
      "",
      "  First start: created the administrator.",
      `  Login name:   admin`,
      `  Password:     in ${pwFile} (readable by this user only)`,
      opts.adminPatFromEnv ? "  Admin PAT:    the value of IDP_ADMIN_PAT" : `  Admin PAT:    in ${patFile}`,
    );
  } else {
    lines.push(
      `  Admin login:  admin (password in ${opts.exists(pwFile) ? pwFile : "the file written on first start"})`,
      `  Admin PAT:    ${opts.adminPatFromEnv ? "IDP_ADMIN_PAT" : opts.exists(patFile) ? patFile : "the token created on first start"}`,
    );
  }
  return lines.join("\n") + "\n";
}
