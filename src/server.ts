/** Starts the HTTP listener for an app context; returns its address and a close function. */
import { serve } from '@hono/node-server';
import type { AddressInfo } from 'node:net';
import { createApp } from './doors/http/app.js';
import type { AppContext } from './doors/http/context.js';

export interface RunningServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

export function startHttpServer(ctx: AppContext, opts: { host: string; port: number }): Promise<RunningServer> {
  const app = createApp(ctx);
  return new Promise((resolve, reject) => {
    const server = serve({ fetch: app.fetch, hostname: opts.host, port: opts.port }, (info: AddressInfo) => {
      const host = info.family === 'IPv6' ? `[${info.address}]` : info.address;
      resolve({
        url: `http://${host}:${info.port}`,
        port: info.port,
        close: () =>
          new Promise<void>((res) => {
            server.close(() => res());
            // Keep-alive sockets would hold close() open.
            (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
          }),
      });
    });
    server.once('error', reject);
  });
}
