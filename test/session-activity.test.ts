import { describe, expect, it } from "vitest";
import { activityDue } from "@/lib/session/activity";

describe("activityDue", () => {
  const now = Date.parse("2026-11-27T12:00:00Z");
  const ago = (s: number) => new Date(now - s * 1000);

  it("records a session's activity again once a minute has passed since it was last recorded", () => {
    const day = { sessionIdle: 86_400 };
    expect(activityDue(ago(0), day, now)).toBe(false);
    expect(activityDue(ago(59), day, now)).toBe(false);
    expect(activityDue(ago(60), day, now)).toBe(true);
    expect(activityDue(ago(3600), day, now)).toBe(true);
  });

  it("records it more often when the idle lifetime is short: after a tenth of it", () => {
    const minute = { sessionIdle: 60 };
    expect(activityDue(ago(5), minute, now)).toBe(false);
    expect(activityDue(ago(6), minute, now)).toBe(true);
    expect(activityDue(ago(9 * 60), { sessionIdle: 300 }, now)).toBe(true);
    expect(activityDue(ago(29), { sessionIdle: 300 }, now)).toBe(false);
    expect(activityDue(ago(30), { sessionIdle: 300 }, now)).toBe(true);
  });
});
