/**
 * `spentOnChain` (src/payments/authorization-state.ts), the one decision the paywall's retry of a
 * claim of unknown outcome and the reconciliation both act on, against stub readers: each of its
 * four results, which transaction a spent one carries, and a read that fails (or cannot be made)
 * never throwing. Its callers' behaviour on a real chain is in payments-reconcile.test.ts, under
 * faults in payments-faults.test.ts and payments-processes-pg.test.ts.
 */
import { describe, expect, it } from 'vitest';
import {
  spentOnChain,
  type AuthorizationQuery,
  type AuthorizationReader,
  type AuthorizationState,
} from '../src/payments/authorization-state.js';

const Q = {
  network: 'eip155:8453',
  asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
  payer: '0x1111111111111111111111111111111111111111',
  nonce: `0x${'ab'.repeat(32)}`,
};
const LOG_TX = `0x${'01'.repeat(32)}`;
const CLAIM_TX = `0x${'02'.repeat(32)}`;

/** A reader that answers `state` and keeps what it was asked. */
function reader(state: AuthorizationState): AuthorizationReader & { asked: AuthorizationQuery[] } {
  const asked: AuthorizationQuery[] = [];
  return Object.assign(
    async (q: AuthorizationQuery) => {
      asked.push(q);
      return state;
    },
    { asked },
  );
}

describe('spentOnChain', () => {
  it('spent, its transaction in the AuthorizationUsed log: spent with that transaction (before the claim’s)', async () => {
    const read = reader({ used: true, tx: LOG_TX });
    expect(await spentOnChain(read, Q, null)).toEqual({ kind: 'spent', tx: LOG_TX });
    expect(await spentOnChain(read, Q, CLAIM_TX)).toEqual({ kind: 'spent', tx: LOG_TX });
    expect(read.asked).toEqual([Q, Q]);
  });

  it('spent, no transaction in the log: spent with the one the claim holds (the facilitator reported it)', async () => {
    expect(await spentOnChain(reader({ used: true, tx: null }), Q, CLAIM_TX)).toEqual({
      kind: 'spent',
      tx: CLAIM_TX,
    });
  });

  it('spent, no transaction visible anywhere: spent_tx_unknown (never a settlement without a receipt)', async () => {
    expect(await spentOnChain(reader({ used: true, tx: null }), Q, null)).toEqual({
      kind: 'spent_tx_unknown',
    });
  });

  it('not used on chain: unspent, whatever transaction the claim holds', async () => {
    expect(await spentOnChain(reader({ used: false, tx: null }), Q, null)).toEqual({ kind: 'unspent' });
    expect(await spentOnChain(reader({ used: false, tx: null }), Q, CLAIM_TX)).toEqual({
      kind: 'unspent',
    });
  });

  it('the chain cannot be read: unreadable with why, never a throw', async () => {
    const down: AuthorizationReader = async () => {
      throw new Error('no RPC configured for payment network eip155:8453');
    };
    expect(await spentOnChain(down, Q, CLAIM_TX)).toEqual({
      kind: 'unreadable',
      error: 'no RPC configured for payment network eip155:8453',
    });
    // A long message is cut to 200 characters; a thrown non-Error is still an answer.
    const verbose: AuthorizationReader = async () => {
      throw new Error('x'.repeat(500));
    };
    expect(await spentOnChain(verbose, Q, null)).toEqual({ kind: 'unreadable', error: 'x'.repeat(200) });
    const odd: AuthorizationReader = () => Promise.reject('socket hang up');
    expect(await spentOnChain(odd, Q, null)).toEqual({ kind: 'unreadable', error: 'socket hang up' });
  });

  it('a network that is not offered (no asset): unreadable, the chain is not asked', async () => {
    const read = reader({ used: true, tx: LOG_TX });
    expect(await spentOnChain(read, { ...Q, network: 'eip155:1', asset: undefined }, CLAIM_TX)).toEqual({
      kind: 'unreadable',
      error: 'payment network eip155:1 is not offered',
    });
    expect(read.asked).toEqual([]);
  });
});
