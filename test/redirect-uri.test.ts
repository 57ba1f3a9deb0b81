import { describe, expect, it } from "vitest";
import { isRegisteredRedirectUri } from "@/lib/oauth/redirect-uri";

// Redirect URIs match exactly (RFC 9700 §4.1.3), except the port of a loopback IP redirect URI,
// which a native app picks when it starts listening (RFC 8252 §7.3).
describe("isRegisteredRedirectUri", () => {
  const registered = ["https://app.example/cb", "http://127.0.0.1/cb", "http://[::1]:8080/native?x=1", "http://localhost/cb", "com.example.app:/cb"];
  const ok = (uri: string) => isRegisteredRedirectUri(registered, uri);

  it("takes a registered URI as it is", () => {
    for (const uri of registered) expect(ok(uri)).toBe(true);
  });

  it("takes a loopback IP URI with any port, or none, and nothing else changed", () => {
    expect(ok("http://127.0.0.1:51004/cb")).toBe(true);
    expect(ok("http://127.0.0.1:1/cb")).toBe(true);
    expect(ok("http://[::1]:49152/native?x=1")).toBe(true);
    expect(ok("http://[::1]/native?x=1")).toBe(true);
  });

  it("refuses any other difference, on loopback addresses too", () => {
    for (const uri of [
      "http://127.0.0.1:51004/cb/more",
      "http://127.0.0.1:51004/CB",
      "http://127.0.0.1:51004/cb?x=1",
      "https://127.0.0.1:51004/cb",
      "http://127.0.0.2:51004/cb",
      "http://127.0.0.1.evil.example:51004/cb",
      "http://127.0.0.1@evil.example/cb",
      "http://127.0.0.1:/cb",
      "http://[::1]:49152/native",
      "http://[::1]:49152/native?x=2",
      "http://[0:0:0:0:0:0:0:1]:49152/native?x=1",
      // localhost is a name, not a loopback IP literal (RFC 8252 §8.3): exact.
      "http://localhost:3000/cb",
      // Other URIs keep their ports.
      "https://app.example:8443/cb",
    ]) {
      expect(ok(uri), uri).toBe(false);
    }
  });
});
