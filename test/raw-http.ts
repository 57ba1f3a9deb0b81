import net from "node:net";

export type RawResponse = { status: number; head: string; body: string; closed: boolean; ms: number };

/**
 * Sends bytes exactly as given (request lines and headers no HTTP client would produce) and
 * reads the answer until the server closes or `waitMs` passes.
 */
export function rawRequest(baseUrl: string, data: string | Buffer, o: { waitMs?: number; keepOpen?: boolean } = {}): Promise<RawResponse> {
  const { hostname, port } = new URL(baseUrl);
  const started = Date.now();
  return new Promise((resolve) => {
    const socket = net.connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    let settled = false;
    const done = (closed: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      const text = Buffer.concat(chunks).toString("latin1");
      const [head = "", body = ""] = text.split("\r\n\r\n", 2);
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0);
      resolve({ status, head, body, closed, ms: Date.now() - started });
    };
    const timer = setTimeout(() => { done(false); }, o.waitMs ?? 5000);
    socket.on("data", (c) => chunks.push(c));
    socket.on("end", () => { done(true); });
    socket.on("close", () => { done(true); });
    socket.on("error", () => { done(true); });
    socket.write(data);
  });
}
