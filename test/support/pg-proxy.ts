/**
 * A proxy between the PostgreSQL backend and the run's server, on a Unix socket of its own, for
 * the tests of lost connections: it passes bytes both ways until told to lose the replies of
 * the connections it has (the server commits, the client never hears), to cut them (the client
 * sees its connection drop, while the server's side may stay open), or to refuse new ones (the
 * server is out of reach).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pgServer } from './pg-cluster.js';

interface Pair {
  readonly client: Socket;
  readonly upstream: Socket;
  /** Set: what the server sends is dropped. */
  deaf: boolean;
}

/** The socket file of a server given by its URI's `host` (a folder) and `port`, or its TCP place. */
function upstreamOf(url: string): { path: string } | { host: string; port: number } {
  const uri = new URL(url);
  const host = uri.searchParams.get('host') ?? uri.hostname;
  const port = Number(uri.searchParams.get('port') ?? (uri.port || 5432));
  return host.startsWith('/') ? { path: join(host, `.s.PGSQL.${port}`) } : { host, port };
}

export class PgProxy {
  private readonly pairs = new Set<Pair>();
  /** Set: a new connection is closed at once. */
  refusing = false;

  /** The server's sides of connections cut on the client's side only. */
  private readonly lingering = new Set<Socket>();

  private constructor(
    readonly dir: string,
    private readonly server: Server,
  ) {}

  static async start(): Promise<PgProxy> {
    const { url } = await pgServer();
    const upstream = upstreamOf(url);
    const dir = mkdtempSync(join(tmpdir(), 'lst-px-'));
    let proxy: PgProxy | null = null;
    const server = createServer((client) => {
      if (proxy === null || proxy.refusing) {
        client.destroy();
        return;
      }
      const pair: Pair = { client, upstream: connect(upstream), deaf: false };
      proxy.pairs.add(pair);
      const drop = (): void => {
        proxy?.pairs.delete(pair);
      };
      client.on('data', (chunk) => pair.upstream.write(chunk));
      pair.upstream.on('data', (chunk) => {
        if (!pair.deaf) client.write(chunk);
      });
      client.on('error', () => undefined);
      pair.upstream.on('error', () => undefined);
      client.on('close', () => {
        drop();
        pair.upstream.end();
      });
      pair.upstream.on('close', () => {
        drop();
        client.destroy();
      });
    });
    await new Promise<void>((resolve) => server.listen(join(dir, '.s.PGSQL.5432'), resolve));
    proxy = new PgProxy(dir, server);
    return proxy;
  }

  /** `uri` (a URI of the run's server) through this proxy. */
  through(uri: string): string {
    const url = new URL(uri);
    // node-postgres takes the host and port parameters over the URI's host
    url.searchParams.set('host', this.dir);
    url.searchParams.set('port', '5432');
    return url.href;
  }

  /** From now on, the connections open now hear nothing from the server. */
  loseReplies(): void {
    for (const pair of this.pairs) pair.deaf = true;
  }

  /**
   * Drops the connections open now on the client's side; with `upstreamToo`, the server's side
   * as well (else the server's session stays, as it would when a network fails between).
   */
  cut(upstreamToo: boolean): void {
    for (const pair of [...this.pairs]) {
      this.pairs.delete(pair);
      pair.client.removeAllListeners('close');
      pair.upstream.removeAllListeners('close');
      pair.client.destroy();
      if (upstreamToo) {
        pair.upstream.destroy();
      } else {
        this.lingering.add(pair.upstream);
        pair.upstream.on('close', () => this.lingering.delete(pair.upstream));
      }
    }
  }

  /** Closes every connection and the proxy, and removes its folder. */
  async close(): Promise<void> {
    this.refusing = true;
    this.cut(true);
    for (const socket of this.lingering) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    rmSync(this.dir, { recursive: true, force: true });
  }
}
