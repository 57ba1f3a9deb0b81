import { describe, expect, it } from "vitest";
import { describeDevice } from "@/lib/session/device";

describe("what the account page says of a session's User-Agent", () => {
  it("names the browser and the system, without versions", () => {
    const cases: [string, { browser: string | null; os: string | null }][] = [
      ["Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:128.0) Gecko/20100101 Firefox/128.0", { browser: "Firefox", os: "Windows" }],
      ["Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36 Edg/120.0.0.0", { browser: "Microsoft Edge", os: "Windows" }],
      ["Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1", { browser: "Safari", os: "iOS" }],
      ["Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15", { browser: "Safari", os: "macOS" }],
      ["Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36", { browser: "Chrome", os: "Android" }],
      ["Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/156.0.0.0 Safari/537.36", { browser: "Chrome", os: "Linux" }],
    ];
    for (const [ua, device] of cases) expect(describeDevice(ua), ua).toEqual(device);
  });

  it("says nothing it cannot tell: no header, an empty or blank one, a script, made-up or overlong text", () => {
    for (const ua of [null, undefined, "", "   "]) expect(describeDevice(ua)).toEqual({ browser: null, os: null });
    expect(describeDevice("curl/8.5.0")).toEqual({ browser: null, os: null });
    expect(describeDevice("<script>alert(1)</script>")).toEqual({ browser: null, os: null });
    expect(describeDevice("x".repeat(512))).toEqual({ browser: null, os: null });
  });
});
