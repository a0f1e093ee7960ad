import { readFileSync } from "node:fs";
import { Code, ConnectError, type Interceptor, type Transport } from "@connectrpc/connect";
import { createGrpcTransport, Http2SessionManager } from "@connectrpc/connect-node";

/** The services of proto/README.md "Services and ports" (accounts and history share the lobby's). */
export const SERVICE_NAMES = ["lobby", "engine", "arbiter", "scoring", "tournament", "clubs"] as const;
export type ServiceName = (typeof SERVICE_NAMES)[number];

/** gRPC's default receive limit, kept on purpose: a client must get by with it (replays are paged). */
export const DEFAULT_READ_MAX_BYTES = 4 * 1024 * 1024;

/** Where the client connects: one door for every service (TLS with `grpcs://`, optionally trusting
 * the CA in `ca`), or each service's own address in plaintext (`host:port`). */
export type ConnectOptions =
  | { door: string; ca?: string | Buffer; readMaxBytes?: number }
  | { endpoints: Record<ServiceName, string>; readMaxBytes?: number };

/** The options named by the environment (the test harness's contract): `STAMMTISCH_DOOR`
 * (`grpcs://host:port`, `grpc://host:port` or `host:port`, the latter meaning TLS) with
 * `STAMMTISCH_CA` (a PEM file), else `STAMMTISCH_LOBBY`, `STAMMTISCH_ENGINE`, `STAMMTISCH_ARBITER`,
 * `STAMMTISCH_SCORING`, `STAMMTISCH_TOURNAMENT` and `STAMMTISCH_CLUBS` (each `host:port`, plaintext). */
export function optionsFromEnv(env: NodeJS.ProcessEnv = process.env): ConnectOptions {
  if (env.STAMMTISCH_DOOR) {
    const door = env.STAMMTISCH_DOOR.includes("://") ? env.STAMMTISCH_DOOR : `grpcs://${env.STAMMTISCH_DOOR}`;
    return { door, ca: env.STAMMTISCH_CA || undefined };
  }
  const endpoints = {} as Record<ServiceName, string>;
  for (const name of SERVICE_NAMES) {
    const address = env[`STAMMTISCH_${name.toUpperCase()}`];
    if (!address) throw new Error(`set STAMMTISCH_DOOR, or STAMMTISCH_${name.toUpperCase()} (host:port)`);
    endpoints[name] = address;
  }
  return { endpoints };
}

/** "grpcs://h:p" -> "https://h:p", "grpc://h:p" -> "http://h:p", "h:p" -> "http://h:p". */
function baseUrl(address: string): string {
  if (address.startsWith("grpcs://")) return `https://${address.slice("grpcs://".length)}`;
  if (address.startsWith("grpc://")) return `http://${address.slice("grpc://".length)}`;
  return address.includes("://") ? address : `http://${address}`;
}

/** One HTTP/2 connection to one address, that can be dropped (every call on it fails with
 * UNAVAILABLE/CANCELED) and is then opened anew by the next call. */
export class Connection {
  private manager: Http2SessionManager;
  transport: Transport;

  constructor(
    readonly address: string,
    private readonly ca: Buffer | undefined,
    private readonly readMaxBytes: number,
    private readonly interceptors: Interceptor[],
  ) {
    [this.manager, this.transport] = this.open();
  }

  private open(): [Http2SessionManager, Transport] {
    const url = baseUrl(this.address);
    const manager = new Http2SessionManager(url, { pingIntervalMs: 30_000 }, this.ca ? { ca: this.ca } : {});
    const transport = createGrpcTransport({ baseUrl: url, sessionManager: manager, readMaxBytes: this.readMaxBytes, interceptors: this.interceptors });
    return [manager, transport];
  }

  /** Cut the connection as a network failure would; later calls connect again. */
  drop(): void {
    const [manager, transport] = this.open();
    const old = this.manager;
    [this.manager, this.transport] = [manager, transport];
    old.abort(new ConnectError("connection dropped", Code.Unavailable));
  }

  close(): void {
    this.manager.abort();
  }
}

/** The connections of a client: one per distinct address, so one door is one connection. */
export class Connections {
  private readonly byAddress = new Map<string, Connection>();
  private readonly ca: Buffer | undefined;
  private readonly readMaxBytes: number;

  constructor(readonly options: ConnectOptions, private readonly interceptors: Interceptor[] = []) {
    this.readMaxBytes = options.readMaxBytes ?? DEFAULT_READ_MAX_BYTES;
    const ca = "door" in options ? options.ca : undefined;
    this.ca = typeof ca === "string" ? readFileSync(ca) : ca;
  }

  /** Whether every service is behind one door (which routes tables itself: no play_port). */
  get behindDoor(): boolean {
    return "door" in this.options;
  }

  addressOf(service: ServiceName): string {
    return "door" in this.options ? this.options.door : this.options.endpoints[service];
  }

  of(service: ServiceName): Connection {
    return this.at(this.addressOf(service));
  }

  at(address: string): Connection {
    let connection = this.byAddress.get(address);
    if (connection === undefined) {
      connection = new Connection(address, this.ca, this.readMaxBytes, this.interceptors);
      this.byAddress.set(address, connection);
    }
    return connection;
  }

  /** Drop every connection (a phone losing its network); the next calls reconnect. */
  dropAll(): void {
    for (const connection of this.byAddress.values()) connection.drop();
  }

  close(): void {
    for (const connection of this.byAddress.values()) connection.close();
    this.byAddress.clear();
  }
}
