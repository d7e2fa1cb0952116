/**
 * The census's own ABI codec (src/completeness/abi-codec.ts) against viem's: the same calldata for
 * every signature it encodes, the same values from every reply it decodes (addresses lower-case),
 * and null, never a throw, for a reply that does not parse.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  encodeAbiParameters,
  encodeFunctionData,
  encodeFunctionResult,
  parseAbi,
  toFunctionSelector,
  type Hex,
} from 'viem';
import {
  addressWord,
  decodeAddress,
  decodeAddresses,
  decodeAggregate3,
  decodeString,
  decodeUint,
  encodeAggregate3,
  encodeGetSummary,
  encodeStatic,
  SELECTOR,
  uintWord,
} from '../src/completeness/abi-codec.js';

const abi = parseAbi([
  'struct Call3 { address target; bool allowFailure; bytes callData; }',
  'struct Result { bool success; bytes returnData; }',
  'function aggregate3(Call3[] calls) payable returns (Result[] returnData)',
  'function ownerOf(uint256 agentId) view returns (address)',
  'function tokenURI(uint256 agentId) view returns (string)',
  'function getClients(uint256 agentId) view returns (address[])',
  'function getLastIndex(uint256 agentId, address clientAddress) view returns (uint64)',
  'function getSummary(uint256 agentId, address[] clientAddresses, string tag1, string tag2) view returns (uint64 count, int128 summaryValue, uint8 summaryValueDecimals)',
]);

const address = fc
  .uint8Array({ minLength: 20, maxLength: 20 })
  .map((b) => `0x${Buffer.from(b).toString('hex')}` as Hex);
const agentId = fc.bigInt({ min: 0n, max: 2n ** 256n - 1n });
const bytes = fc.uint8Array({ maxLength: 200 }).map((b) => `0x${Buffer.from(b).toString('hex')}` as Hex);

describe('encoding', () => {
  it('selectors are those of the signatures', () => {
    expect(`0x${SELECTOR.ownerOf}`).toBe(toFunctionSelector('ownerOf(uint256)'));
    expect(`0x${SELECTOR.tokenURI}`).toBe(toFunctionSelector('tokenURI(uint256)'));
    expect(`0x${SELECTOR.getClients}`).toBe(toFunctionSelector('getClients(uint256)'));
    expect(`0x${SELECTOR.getLastIndex}`).toBe(toFunctionSelector('getLastIndex(uint256,address)'));
    expect(`0x${SELECTOR.getSummary}`).toBe(
      toFunctionSelector('getSummary(uint256,address[],string,string)'),
    );
    expect(`0x${SELECTOR.aggregate3}`).toBe(toFunctionSelector('aggregate3((address,bool,bytes)[])'));
  });

  it('static calls, getSummary and aggregate3 are byte for byte viem’s', () => {
    fc.assert(
      fc.property(agentId, address, fc.array(address, { maxLength: 12 }), (id, client, clients) => {
        expect(encodeStatic(SELECTOR.ownerOf, uintWord(id))).toBe(
          encodeFunctionData({ abi, functionName: 'ownerOf', args: [id] }),
        );
        expect(encodeStatic(SELECTOR.getLastIndex, uintWord(id), addressWord(client))).toBe(
          encodeFunctionData({ abi, functionName: 'getLastIndex', args: [id, client] }),
        );
        expect(encodeGetSummary(id.toString(), clients)).toBe(
          encodeFunctionData({ abi, functionName: 'getSummary', args: [id, clients, '', ''] }),
        );
      }),
      { numRuns: 100 },
    );
    fc.assert(
      fc.property(fc.array(fc.record({ to: address, data: bytes }), { maxLength: 20 }), (calls) => {
        expect(encodeAggregate3(calls)).toBe(
          encodeFunctionData({
            abi,
            functionName: 'aggregate3',
            args: [calls.map((c) => ({ target: c.to, allowFailure: true, callData: c.data }))],
          }),
        );
      }),
      { numRuns: 100 },
    );
  });
});

describe('decoding', () => {
  it('aggregate3 results: each reply, null for a failed one', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ success: fc.boolean(), returnData: bytes }), { maxLength: 20 }),
        (results) => {
          const data = encodeFunctionResult({ abi, functionName: 'aggregate3', result: results });
          expect(decodeAggregate3(data, results.length)).toEqual(
            results.map((r) => (r.success ? r.returnData : null)),
          );
          // a reply of another length than asked is no answer
          expect(decodeAggregate3(data, results.length + 1)).toBeNull();
        },
      ),
      { numRuns: 100 },
    );
  });

  it('uint, address (lower-case), string (as viem decodes UTF-8) and address[]', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }),
        address,
        fc.string({ unit: 'binary', maxLength: 80 }),
        fc.array(address, { maxLength: 10 }),
        (n, a, s, list) => {
          expect(decodeUint(encodeFunctionResult({ abi, functionName: 'getLastIndex', result: n }))).toBe(n);
          expect(decodeAddress(encodeFunctionResult({ abi, functionName: 'ownerOf', result: a }))).toBe(
            a.toLowerCase(),
          );
          expect(decodeString(encodeFunctionResult({ abi, functionName: 'tokenURI', result: s }))).toBe(s);
          expect(
            decodeAddresses(encodeFunctionResult({ abi, functionName: 'getClients', result: list })),
          ).toEqual(list.map((x) => x.toLowerCase()));
          expect(
            decodeUint(encodeFunctionResult({ abi, functionName: 'getSummary', result: [n, -5n, 2] })),
          ).toBe(n);
        },
      ),
      { numRuns: 100 },
    );
    // invalid UTF-8 is replaced as TextDecoder (viem) replaces it
    const raw = encodeAbiParameters([{ type: 'bytes' }], ['0x68c3ff69']);
    expect(decodeString(raw)).toBe(new TextDecoder().decode(Buffer.from('68c3ff69', 'hex')));
  });

  it('a reply that does not parse is null, never a throw', () => {
    fc.assert(
      fc.property(bytes, (junk) => {
        for (const f of [decodeUint, decodeAddress, decodeString, decodeAddresses])
          expect(() => f(junk)).not.toThrow();
        expect(() => decodeAggregate3(junk, 3)).not.toThrow();
      }),
      { numRuns: 300 },
    );
    expect(decodeUint('0x')).toBeNull();
    expect(decodeString(`0x${'0'.repeat(62)}20`)).toBeNull(); // an offset past the end
    expect(decodeAddresses(`0x${uintWord(32)}${uintWord(5)}`)).toBeNull(); // five addresses promised, none there
    expect(decodeAddress(null)).toBeNull();
  });
});
