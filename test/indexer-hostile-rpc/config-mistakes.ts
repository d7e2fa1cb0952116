/**
 * The EVM indexer against hostile RPC endpoints, the configuration mistakes a new operator makes:
 * an implementation address, a registry whose getIdentityRegistry() answers zero, no code, a
 * startBlock above the head, registries with no event. Registered by
 * test/indexer-hostile-rpc.test.ts on its one local chain (the fixture:
 * test/helpers/hostile-rpc-fixture.ts).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { pad, type Hex } from 'viem';
import { deployRegistries } from '../../src/demo/registries.js';
import { createApp } from '../../src/doors/http/app.js';
import { EIP1967_IMPLEMENTATION_SLOT, INITIALIZABLE_SLOT } from '../../src/indexer/config-check.js';
import type { ChainPassResult } from '../../src/indexer/pass.js';
import { configFor, target, type ChainTarget } from '../helpers/indexer-fixtures.js';
import { hostileRpcTools, type HostileRpcFixture } from '../helpers/hostile-rpc-fixture.js';

/** The suite over the file's fixture. */
export function configMistakesSuite(fixture: () => HostileRpcFixture): void {
  let chain: HostileRpcFixture['chain'];
  let t: HostileRpcFixture['t'];
  let head: HostileRpcFixture['head'];
  const { pass, chainRow } = hostileRpcTools(fixture);
  beforeAll(() => {
    ({ chain, t, head } = fixture());
  });

  describe('configuration mistakes', () => {
    async function refused(tg: ChainTarget, pattern: RegExp): Promise<ChainPassResult> {
      const { r, chain: c } = await pass([tg]);
      expect(r.failed).toEqual([tg.network]);
      expect(c.error).toMatch(pattern);
      const row = await chainRow(tg.network);
      expect(row.last_error).toMatch(pattern);
      expect(row.backfill_complete).toBe(false);
      expect(row.last_scanned_block).toBeNull();
      return c;
    }

    it("the identity registry's implementation (its code, empty storage): refused, naming the address to use", async () => {
      const impl = '0x00000000000000000000000000000000000a11ce' as Hex;
      const code = await chain.node.request<Hex>('eth_getCode', [chain.reg.identityRegistry, 'latest']);
      await chain.node.request('hardhat_setCode', [impl, code]);
      await refused(
        { ...target(chain, { network: 'optimism' }), reg: { ...chain.reg, identityRegistry: impl } },
        new RegExp(`set identityRegistry to ${chain.reg.identityRegistry.toLowerCase()}`),
      );
    });

    /** Code of `from` at `impl`, its initializers disabled as an OpenZeppelin implementation's are. */
    async function implementationOf(from: Hex, impl: Hex): Promise<void> {
      const code = await chain.node.request<Hex>('eth_getCode', [from, 'latest']);
      await chain.node.request('hardhat_setCode', [impl, code]);
      await chain.node.request('hardhat_setStorageAt', [
        impl,
        INITIALIZABLE_SLOT,
        `0x${'0'.repeat(48)}${'f'.repeat(16)}`,
      ]);
    }

    it("the identity registry's implementation (initializers disabled): refused, naming the proxy the reputation registry's getIdentityRegistry() names on this chain", async () => {
      const impl = '0x00000000000000000000000000000000000a1d00' as Hex;
      await implementationOf(chain.reg.identityRegistry, impl);
      const c = await refused(
        { ...target(chain, { network: 'polygon' }), reg: { ...chain.reg, identityRegistry: impl } },
        new RegExp(
          `identityRegistry 0x0+a1d00 is an implementation contract .*set identityRegistry to ${chain.reg.identityRegistry.toLowerCase()} \\(the reputationRegistry's getIdentityRegistry\\(\\) names it\\)`,
        ),
      );
      // never the network's built-in mainnet proxy, which has no code on this chain
      expect(c.error).not.toMatch(/0x8004/i);
    });

    it("the reputation registry's implementation: refused, naming the built-in proxy only when it is a contract on this chain whose EIP-1967 slot holds the implementation", async () => {
      const impl = '0x00000000000000000000000000000000000b0b00' as Hex;
      await implementationOf(chain.reg.reputationRegistry, impl);
      const tg = {
        ...target(chain, { network: 'polygon' }),
        reg: { ...chain.reg, reputationRegistry: impl },
      };
      const bare = await refused(
        tg,
        /reputationRegistry 0x0+b0b00 is an implementation contract .*configure the proxy's address instead \(the contract whose EIP-1967 implementation slot/,
      );
      expect(bare.error).not.toMatch(/0x8004/i);
      // A proxy at the built-in address of polygon, on this chain, pointing at the implementation.
      const builtIn = '0x8004BAa17C55a88189AE136b182e5fdA19dE9b63';
      await chain.node.request('hardhat_setCode', [builtIn, '0x6000']);
      await chain.node.request('hardhat_setStorageAt', [
        builtIn,
        EIP1967_IMPLEMENTATION_SLOT,
        pad(impl, { size: 32 }),
      ]);
      try {
        await refused(
          tg,
          new RegExp(
            `set reputationRegistry to ${builtIn.toLowerCase()} \\(the built-in reputationRegistry of polygon, whose EIP-1967 implementation slot holds this address\\)`,
          ),
        );
      } finally {
        await chain.node.request('hardhat_setCode', [builtIn, '0x']);
      }
    });

    it('a reputation registry whose getIdentityRegistry() answers zero (empty storage): refused', async () => {
      const impl = '0x0000000000000000000000000000000000c0ffee' as Hex;
      await chain.node.request('hardhat_setCode', [impl, '0x60206000f3']); // returns 32 zero bytes
      await refused(
        { ...target(chain, { network: 'robinhood' }), reg: { ...chain.reg, reputationRegistry: impl } },
        /getIdentityRegistry\(\) = the zero address: an implementation/,
      );
    });

    it('no code at a configured address: refused', async () => {
      await refused(
        {
          ...target(chain, { network: 'avalanche' }),
          reg: { ...chain.reg, identityRegistry: '0x000000000000000000000000000000000000dEaD' },
          startBlock: 0,
        },
        /no contract code at the identityRegistry 0x0+dead/,
      );
    });

    it('a startBlock above the chain head: an error in /health, never backfill_complete', async () => {
      await refused(
        target(chain, { network: 'solana', startBlock: head + 1_000 }),
        new RegExp(`startBlock ${head + 1_000} is above the chain head ${head}`),
      );
      const app = createApp({
        config: configFor([target(chain, { network: 'solana' })]),
        db: t.db,
        now: () => new Date(),
      });
      const health = (await (await app.request('/health')).json()) as {
        status: string;
        chains: { network: string; backfill_complete: boolean; last_error: string | null }[];
      };
      expect(health.status).toBe('degraded');
      const row = health.chains.find((x) => x.network === 'solana')!;
      expect(row.backfill_complete).toBe(false);
      expect(row.last_error).toContain('above the chain head');
    });

    it('registries that never emitted an event: indexed, with a warning in /health', async () => {
      const fresh = await deployRegistries(chain.node.rpcUrl, chain.node.privateKeys[2]!);
      const { chain: c, log } = await pass([target(chain, { network: 'robinhood', reg: fresh })]);
      expect(c.status).toBe('ok');
      expect(log.warnings.some((w) => w.includes('no agent and no feedback'))).toBe(true);
      const app = createApp({
        config: configFor([target(chain, { network: 'robinhood' })]),
        db: t.db,
        now: () => new Date(),
      });
      const health = (await (await app.request('/health')).json()) as {
        chains: { network: string; warnings: string[] }[];
      };
      expect(health.chains.find((x) => x.network === 'robinhood')!.warnings[0]).toMatch(
        /implementation behind a proxy/,
      );
    });
  });
}
