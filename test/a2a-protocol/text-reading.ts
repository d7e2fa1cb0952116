/**
 * The A2A door's envelope, the bounded reading of the message text: text parts joined, only the
 * first MAX_TEXT_CHARS scanned, non-text parts ignored. Registered by test/a2a-protocol.test.ts on
 * its servers (the client: test/helpers/a2a-client.ts).
 */
import { describe, expect, it } from 'vitest';
import { classify, extractText, MAX_TEXT_CHARS } from '../../src/doors/a2a/dispatch.js';
import { NOBODY, STATUS, expectMessage, a2aClient, type A2aServers } from '../helpers/a2a-client.js';

/** The 'bounded reading of the message text' suite over the file's servers. */
export function textReadingSuite(servers: () => A2aServers): void {
  const { send } = a2aClient(servers);

  describe('bounded reading of the message text', () => {
    it('joins text parts with a newline and scans only the first MAX_TEXT_CHARS characters', () => {
      expect(
        extractText({
          message: {
            parts: [
              { kind: 'text', text: 'a' },
              { type: 'text', text: 'b' },
            ],
          },
        }),
      ).toBe('a\nb');
      const long = extractText({
        message: {
          parts: [
            { kind: 'text', text: 'x'.repeat(10_000) },
            { kind: 'text', text: NOBODY },
          ],
        },
      });
      expect(long.length).toBe(MAX_TEXT_CHARS);
      expect(classify(long)).toEqual({ kind: 'status', empty: false });
      expect(classify(`${'x '.repeat(100)}${NOBODY}`)).toMatchObject({ kind: 'evm', address: NOBODY });
    });

    it('finds an address past the bound only if it starts within it (over the wire too)', async () => {
      const pad = ' '.repeat(MAX_TEXT_CHARS - 10);
      expect(expectMessage((await send(`${pad}${NOBODY}`)).body, 1)).toMatch(STATUS);
      expect(expectMessage((await send(`${' '.repeat(100)}${NOBODY}`)).body, 1)).toContain(
        `Wallet ${NOBODY}`,
      );
    });

    it('reads at most 64 parts', () => {
      const parts = [
        ...Array.from({ length: 64 }, () => ({ kind: 'text', text: '.' })),
        { kind: 'text', text: NOBODY },
      ];
      expect(classify(extractText({ message: { parts } }))).toEqual({ kind: 'status', empty: false });
    });

    it('classifies: the first EVM address anywhere, standing alone; then a base58 key; digits only and empty are status', () => {
      const a = '0x1111111111111111111111111111111111111111';
      const b = '0xAbCdEf0000000000000000000000000000000002';
      expect(classify(`compare ${b} with ${a} and ${a}`)).toEqual({
        kind: 'evm',
        address: b.toLowerCase(),
        others: 1,
      });
      expect(classify(`(${a}).`)).toEqual({ kind: 'evm', address: a, others: 0 });
      // Glued to other hex or letters it is not an address (a transaction hash is not a wallet).
      expect(classify(`0x${'ab'.repeat(32)}`).kind).not.toBe('evm');
      expect(classify(`${a}ff`).kind).not.toBe('evm');
      expect(classify(`z${a}`).kind).not.toBe('evm');
      // EVM first, even after a base58 key.
      expect(classify(`So1anaWa11et${'A'.repeat(32)} ${a}`)).toMatchObject({ kind: 'evm', address: a });
      expect(classify(`vet So1anaWa11et${'A'.repeat(32)}?`)).toEqual({
        kind: 'base58',
        key: `So1anaWa11et${'A'.repeat(32)}`,
      });
      expect(classify('7')).toEqual({ kind: 'status', empty: false });
      expect(classify('1'.repeat(40))).toEqual({ kind: 'status', empty: false });
      expect(classify('')).toEqual({ kind: 'status', empty: true });
      expect(classify('  \n ')).toEqual({ kind: 'status', empty: true });
      // Too long for a key (45 base58 characters) is no key.
      expect(classify('A'.repeat(45)).kind).toBe('status');
    });
  });
}
