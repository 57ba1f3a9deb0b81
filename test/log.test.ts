import { Writable } from "node:stream";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { users } from "@/db/schema";
import { errorForLog, queryName } from "@/lib/log-errors";
import { startTestInstance, type TestInstance } from "./harness";

let t: TestInstance;
beforeAll(async () => {
  t = await startTestInstance();
});
afterAll(() => t.close());

/** A logger configured like lib/log.ts, writing into a string. */
function capture() {
  let out = "";
  const stream = new Writable({
    write(chunk, _enc, done) {
      out += (chunk as Buffer).toString();
      done();
    },
  });
  const logger = pino({ serializers: { err: errorForLog, error: errorForLog } }, stream);
  return { logger, text: () => out };
}

describe("logged errors", () => {
  it("a failed query is logged by its class, query name and SQLSTATE, without its parameters or the database's detail", async () => {
    const row = { id: "log-1", type: "human" as const, username: "personal.name.4711", email: "personal.4711@example.com" };
    await t.inst.db.insert(users).values(row);
    const err = await t.inst.db
      .insert(users)
      .values({ ...row, id: "log-2" })
      .then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    // The raw error does carry the personal data; this is what must not reach the log.
    expect(JSON.stringify({ m: (err as Error).message, c: (err as Error).cause instanceof Error ? ((err as Error).cause as Error).message : "" }) + JSON.stringify(err)).toContain("4711");

    const { logger, text } = capture();
    logger.error({ err }, "step failed");
    const line = JSON.parse(text());
    expect(text()).not.toContain("4711");
    expect(line.err).toMatchObject({ query: "insert users", code: "23505", constraint: "users_username_lower_idx" });
    expect(typeof line.err.type).toBe("string");
  });

  it("other errors keep their message and stack", () => {
    const { logger, text } = capture();
    logger.error({ err: new TypeError("plain failure") }, "x");
    expect(JSON.parse(text()).err).toMatchObject({ type: "TypeError", message: "plain failure" });
  });

  it("names queries by verb and table only", () => {
    expect(queryName('select "id", "username" from "users" where lower("users"."username") = lower($1)')).toBe("select users");
    expect(queryName('update "sessions" set "ended_at" = $1')).toBe("update sessions");
    expect(queryName("DELETE FROM rate_limit_counters WHERE expires_at < $1")).toBe("delete rate_limit_counters");
    expect(queryName(undefined)).toBeUndefined();
  });
});
