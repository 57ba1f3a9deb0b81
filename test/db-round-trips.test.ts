/**
 * The benchmark's database round-trip count (IDP_DEBUG_DB_ROUND_TRIPS=1): counted per request,
 * BEGIN and COMMIT included, in a response header; absent when the variable is not set.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROUND_TRIPS_HEADER } from "@/lib/db/round-trips";
import { createToriiServer } from "@/lib/server/create-server";
import { startTestInstance, type TestInstance } from "./harness";

let t: TestInstance;
let counting: http.Server;
let countingUrl: string;

beforeAll(async () => {
  process.env.IDP_DEBUG_DB_ROUND_TRIPS = "1";
  t = await startTestInstance();
  delete process.env.IDP_DEBUG_DB_ROUND_TRIPS;
  counting = createToriiServer(t.inst);
  await new Promise<void>((r) => counting.listen(0, "127.0.0.1", r));
  countingUrl = `http://127.0.0.1:${(counting.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise<void>((r) => counting.close(() => { r(); }));
  await t.close();
});

describe("database round-trip counter", () => {
  it("counts each statement, and BEGIN and COMMIT of a transaction, inside its run only", async () => {
    const counter = t.inst.database.roundTrips!;
    expect(counter).toBeDefined();
    const one = await counter.run(async (tally) => {
      await t.inst.db.execute(sql`select 1`);
      return tally.n;
    });
    expect(one).toBe(1);
    const tx = await counter.run(async (tally) => {
      await t.inst.db.transaction(async (db) => {
        await db.execute(sql`select 1`);
        await db.execute(sql`select 2`);
      });
      return tally.n;
    });
    expect(tx).toBe(4);
    // Outside a run nothing is counted and nothing fails.
    await t.inst.db.execute(sql`select 1`);
  });

  it("puts the count of each request in a response header, only on a server given the counter", async () => {
    const clients = await t.api("/management/v1/clients?limit=1");
    const counted = await fetch(countingUrl + "/management/v1/clients?limit=1", { headers: { authorization: `Bearer ${t.adminPat}` } });
    expect(counted.status).toBe(200);
    // The PAT lookup and the list are at least two statements.
    expect(Number(counted.headers.get(ROUND_TRIPS_HEADER))).toBeGreaterThanOrEqual(2);
    expect(clients.headers.get(ROUND_TRIPS_HEADER)).toBeNull();
    const unknown = await fetch(countingUrl + "/no-such-path");
    expect(unknown.headers.get(ROUND_TRIPS_HEADER)).toBe("0");
  });
});
