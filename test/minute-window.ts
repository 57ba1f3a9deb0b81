/**
 * Waits, when the system clock is within `needMs` of the next whole minute, until that minute has
 * begun. The rate limits and the failure sampler count in minute windows of the engine's clock
 * (lib/http/token-throttle.ts, lib/store/rate-limit.ts); a burst that a test expects to be counted
 * in one window (one sampled audit event, one shared counter row) would otherwise, now and then,
 * straddle two and the test fail for a reason that is not a defect.
 */
export async function inOneMinuteWindow(needMs = 10_000): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < needMs) await new Promise((resolve) => setTimeout(resolve, left + 50));
}
