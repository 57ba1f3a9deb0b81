import net from "node:net";
import type { AddressInfo } from "node:net";

/**
 * A TCP proxy in front of a server (PostgreSQL, in the tests of a database out of reach): `cut`
 * refuses new connections and resets the open ones, as a restart or a network cut would; `open`
 * listens again on the same port.
 */
export class TcpProxy {
  private server?: net.Server;
  private sockets = new Set<net.Socket>();
  port = 0;
  constructor(private readonly upstream: { host: string; port: number }) {}

  async open(): Promise<void> {
    this.server = net.createServer((down) => {
      const up = net.connect(this.upstream.port, this.upstream.host);
      for (const s of [down, up]) {
        this.sockets.add(s);
        s.on("close", () => this.sockets.delete(s));
        s.on("error", () => s.destroy());
      }
      down.pipe(up).pipe(down);
    });
    await new Promise<void>((r) => this.server!.listen(this.port, "127.0.0.1", r));
    this.port = (this.server.address() as AddressInfo).port;
  }

  /** Stops accepting (new connections are refused) and resets every open one. */
  async cut(): Promise<void> {
    const closed = new Promise<void>((r) => this.server!.close(() => { r(); }));
    for (const s of this.sockets) s.resetAndDestroy();
    await closed;
  }
}
