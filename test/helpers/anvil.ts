/**
 * A real anvil node (the @foundry-rs/anvil-<platform> binary from npm) on 127.0.0.1 for reorg
 * tests: `anvil_reorg` takes POSITIONAL params `[depth, [[tx, blockOffset], …]]` and replaces the
 * last `depth` blocks by `depth` new ones (same head height), putting each given transaction (a
 * JSON request from an unlocked dev account) into the new block at `blockOffset`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { numberToHex, type Hex } from 'viem';

function anvilBinary(): string {
  const require = createRequire(import.meta.url);
  const pkg = `@foundry-rs/anvil-${process.platform}-${process.arch === 'x64' ? 'amd64' : process.arch}`;
  return join(dirname(require.resolve(`${pkg}/package.json`)), 'bin', 'anvil');
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

export interface Anvil {
  rpcUrl: string;
  rpc<T>(method: string, params?: unknown[]): Promise<T>;
  head(): Promise<number>;
  mine(n: number): Promise<unknown>;
  stop(): Promise<void>;
}

/** `extraArgs`: more anvil flags (a benchmark raises the block gas limit). */
export async function startAnvil(chainId: number, extraArgs: string[] = []): Promise<Anvil> {
  const port = await freePort();
  const rpcUrl = `http://127.0.0.1:${port}`;
  const child: ChildProcess = spawn(
    anvilBinary(),
    ['--host', '127.0.0.1', '--port', String(port), '--chain-id', String(chainId), '--silent', ...extraArgs],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  let id = 0;
  const rpc = async <T>(method: string, params: unknown[] = []): Promise<T> => {
    const res = await fetch(rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: ++id, method, params }),
    });
    const body = (await res.json()) as { result?: T; error?: { message: string } };
    if (body.error) throw new Error(`${method}: ${body.error.message}`);
    return body.result as T;
  };
  const anvil: Anvil = {
    rpcUrl,
    rpc,
    head: async () => Number(await rpc<Hex>('eth_blockNumber')),
    mine: (n: number) => rpc('anvil_mine', [numberToHex(n)]),
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`anvil exited ${child.exitCode}: ${stderr}`);
    try {
      if ((await rpc<Hex>('eth_chainId')) === numberToHex(chainId)) return anvil;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await anvil.stop();
      throw new Error(`anvil did not start: ${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}
