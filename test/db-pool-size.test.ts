import { describe, expect, it } from "vitest";
import { postgresPoolSize, reconnectDelaySeconds } from "@/lib/db/client";

/** Connections to PostgreSQL per process: few, since postgres.js pipelines the statements beyond them. */
describe("postgresPoolSize", () => {
  it("is one connection per core, at least 2", () => {
    expect(postgresPoolSize({}, 1)).toBe(2);
    expect(postgresPoolSize({}, 2)).toBe(2);
    expect(postgresPoolSize({}, 12)).toBe(12);
  });

  it("is IDP_DB_POOL_SIZE when that is a positive whole number, and the default otherwise", () => {
    expect(postgresPoolSize({ IDP_DB_POOL_SIZE: "10" }, 2)).toBe(10);
    expect(postgresPoolSize({ IDP_DB_POOL_SIZE: "1" }, 8)).toBe(1);
    for (const bad of ["", "0", "-3", "2.5", "many"]) expect(postgresPoolSize({ IDP_DB_POOL_SIZE: bad }, 4)).toBe(4);
  });
});

describe("reconnectDelaySeconds", () => {
  it("grows from a few hundredths of a second and stays within a second, whatever the failures", () => {
    expect(reconnectDelaySeconds(0, 1)).toBeCloseTo(0.05);
    expect(reconnectDelaySeconds(0, 0)).toBeCloseTo(0.025);
    expect(reconnectDelaySeconds(3, 1)).toBeCloseTo(0.4);
    for (const retries of [5, 10, 50, 1000]) {
      expect(reconnectDelaySeconds(retries, 1)).toBe(1);
      expect(reconnectDelaySeconds(retries, 0)).toBe(0.5);
    }
  });
});
