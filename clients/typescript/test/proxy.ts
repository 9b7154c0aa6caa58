/**
 * A TCP proxy in front of the test server that can fail on purpose, so the tests see
 * what a game sees on a bad network:
 * - `drop`: the next request reaches the server (which applies it), but the answer never
 *   comes back: its connection is cut as the answer arrives;
 * - `busy`: the next request is answered 503 without reaching the server;
 * - `html`: the next request is answered 502 with a web page, as a broken gateway would;
 * - `cutAll()`: every open connection is cut (an event stream's, say).
 */
import net from "node:net";

export type Fault = "drop" | "busy" | "html";

export class FaultyProxy {
  private readonly server: net.Server;
  private readonly open = new Set<net.Socket>();
  private faults: Fault[] = [];
  /** Requests that reached the server. */
  forwarded = 0;

  private constructor(
    private readonly upstream: { host: string; port: number },
    server: net.Server,
  ) {
    this.server = server;
  }

  static async start(upstreamUrl: string): Promise<FaultyProxy> {
    const u = new URL(upstreamUrl);
    const upstream = { host: u.hostname, port: Number(u.port) };
    const server = net.createServer();
    const proxy = new FaultyProxy(upstream, server);
    server.on("connection", (c) => proxy.accept(c));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return proxy;
  }

  /** Connections open now, both sides counted. */
  get openCount(): number {
    return this.open.size;
  }

  get url(): string {
    const a = this.server.address() as net.AddressInfo;
    return `http://127.0.0.1:${a.port}`;
  }

  /** Fails the next requests, in order. */
  fail(...faults: Fault[]): void {
    this.faults.push(...faults);
  }

  cutAll(): void {
    for (const s of this.open) s.destroy();
  }

  async close(): Promise<void> {
    this.cutAll();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: net.Socket): void {
    this.open.add(client);
    client.on("close", () => this.open.delete(client));
    client.on("error", () => {});
    const up = net.connect(this.upstream);
    this.open.add(up);
    up.on("close", () => this.open.delete(up));
    up.on("error", () => client.destroy());
    // Faults apply to requests, not connections: a kept-alive connection carries many,
    // one at a time. A chunk that begins with a method begins a request.
    let fault: Fault | undefined;
    client.on("data", (d) => {
      if (/^(GET|POST|PUT|PATCH|DELETE) /.test(d.toString("latin1", 0, 8))) {
        fault = this.faults.shift();
        if (fault !== "busy" && fault !== "html") this.forwarded++;
      }
      if (fault === "busy" || fault === "html") {
        const [status, type, body] =
          fault === "busy"
            ? ["503 Service Unavailable", "application/json", JSON.stringify({ error: { code: "overloaded", message: "busy (the test's proxy)" } })]
            : ["502 Bad Gateway", "text/html", "<html><body>Bad gateway</body></html>"];
        client.end(
          `HTTP/1.1 ${status}\r\nContent-Type: ${type}\r\nRetry-After: 0\r\n` +
            `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
        );
        up.destroy();
        return;
      }
      up.write(d);
    });
    client.on("end", () => up.end());
    up.on("data", (d) => {
      if (fault === "drop") {
        // The server answered: it applied the request. The game never hears of it.
        client.destroy();
        up.destroy();
        return;
      }
      client.write(d);
    });
    up.on("end", () => client.end());
  }
}
