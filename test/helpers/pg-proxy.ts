/**
 * A TCP proxy in front of the PostgreSQL test server, to make "the database stopped" happen to one
 * test's connections only (never stop the machine's shared cluster): `cut()` drops every open
 * connection and refuses new ones (connections reset at once, as a stopped server's would),
 * `restore()` lets them through again. `urlFor(url)` rewrites a DATABASE_URL to go through it.
 */
import { createServer, connect, type AddressInfo, type Server, type Socket } from 'node:net';

export interface PgProxy {
  readonly port: number;
  /** The same database URL, through the proxy. */
  urlFor(databaseUrl: string): string;
  cut(): void;
  restore(): void;
  close(): Promise<void>;
}

export async function startPgProxy(target: { host: string; port: number }): Promise<PgProxy> {
  const open = new Set<Socket>();
  let down = false;
  const server: Server = createServer((client) => {
    if (down) {
      client.resetAndDestroy();
      return;
    }
    const upstream = connect(target.port, target.host);
    open.add(client);
    open.add(upstream);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      open.delete(client);
      open.delete(upstream);
    };
    client.on('error', drop);
    upstream.on('error', drop);
    client.on('close', drop);
    upstream.on('close', drop);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((res) => server.listen(0, '127.0.0.1', res));
  const port = (server.address() as AddressInfo).port;
  const cutAll = () => {
    for (const s of open) s.resetAndDestroy();
    open.clear();
  };
  return {
    port,
    urlFor(databaseUrl) {
      const u = new URL(databaseUrl);
      u.hostname = '127.0.0.1';
      u.port = String(port);
      return u.toString();
    },
    cut() {
      down = true;
      cutAll();
    },
    restore() {
      down = false;
    },
    async close() {
      down = true;
      cutAll();
      await new Promise<void>((res) => server.close(() => res()));
    },
  };
}

/** Host and port of a postgres:// URL. */
export function pgTarget(databaseUrl: string): { host: string; port: number } {
  const u = new URL(databaseUrl);
  return { host: u.hostname || '127.0.0.1', port: Number(u.port || 5432) };
}
