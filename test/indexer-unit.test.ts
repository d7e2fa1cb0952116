/** Pure parts of the indexer: exact decimals, string sanitising, RPC error classes, declared types. */
import { HttpRequestError, RpcRequestError, TimeoutError } from 'viem';
import { describe, expect, it } from 'vitest';
import { classifyEvmError } from '../src/indexer/rpc-retry.js';
import { declaredTypeFromUri } from '../src/indexer/ingest.js';
import { sanitizeText, scaleDecimal } from '../src/indexer/scanner.js';

describe('scaleDecimal', () => {
  it('divides by 10^decimals exactly with bigints', () => {
    expect(scaleDecimal(8750n, 2)).toBe('87.5');
    expect(scaleDecimal(-3n, 0)).toBe('-3');
    expect(scaleDecimal(0n, 0)).toBe('0');
    expect(scaleDecimal(0n, 18)).toBe('0');
    expect(scaleDecimal(100n, 2)).toBe('1');
    expect(scaleDecimal(5n, 3)).toBe('0.005');
    expect(scaleDecimal(-5n, 3)).toBe('-0.005');
    expect(scaleDecimal(100000000000000000001n, 18)).toBe('100.000000000000000001');
    const max = 2n ** 127n - 1n;
    expect(scaleDecimal(max, 0)).toBe(max.toString());
    expect(scaleDecimal(-(2n ** 127n), 255)).toMatch(/^-0\.0+170141183460469231731687303715884105728$/);
  });
});

describe('sanitizeText', () => {
  it('replaces NUL and lone surrogates, keeps everything else', () => {
    expect(sanitizeText('a\u0000b')).toBe('a\uFFFDb');
    expect(sanitizeText('x\uD800y')).toBe('x\uFFFDy');
    expect(sanitizeText('🎉 <script>"\'&')).toBe('🎉 <script>"\'&');
  });
});

describe('classifyEvmError', () => {
  const rpc = (code: number, message: string) =>
    new RpcRequestError({ body: {}, url: 'http://x', error: { code, message } });
  it('sorts errors into range / timeout / transient / fatal', () => {
    expect(classifyEvmError(rpc(-32005, 'query returned more than 10000 results'), true)).toBe('range');
    expect(classifyEvmError(rpc(-32602, 'block range too large'), true)).toBe('range');
    expect(classifyEvmError(rpc(-32000, 'Log response size exceeded.'), true)).toBe('range');
    expect(classifyEvmError(rpc(-32602, 'exceed maximum block range: 50000'), true)).toBe('range');
    expect(classifyEvmError(rpc(-32005, 'daily request rate limit exceeded'), true)).toBe('transient');
    expect(classifyEvmError(new HttpRequestError({ url: 'http://x', status: 429 }), true)).toBe('transient');
    expect(classifyEvmError(new HttpRequestError({ url: 'http://x', status: 503 }), false)).toBe('transient');
    expect(classifyEvmError(new HttpRequestError({ url: 'http://x', details: 'fetch failed' }), false)).toBe(
      'transient',
    );
    expect(classifyEvmError(new TimeoutError({ body: {}, url: 'http://x' }), true)).toBe('timeout');
    expect(classifyEvmError(rpc(-32601, 'the method eth_getLogs does not exist'), true)).toBe('fatal');
    // "range" means nothing outside getLogs
    expect(classifyEvmError(rpc(-32602, 'block range too large'), false)).toBe('fatal');
  });
});

describe('declaredTypeFromUri', () => {
  it('reads agentType / category of an inline JSON registration file, nothing else', () => {
    const b64 = (o: unknown) =>
      `data:application/json;base64,${Buffer.from(JSON.stringify(o)).toString('base64')}`;
    expect(declaredTypeFromUri(b64({ agentType: 'oracle' }))).toBe('oracle');
    expect(declaredTypeFromUri(b64({ category: ' defi ' }))).toBe('defi');
    // the registration file's `type` is its schema marker, not the agent's type
    expect(
      declaredTypeFromUri(b64({ type: 'https://eips.ethereum.org/EIPS/eip-8004#registration-v1' })),
    ).toBeNull();
    expect(declaredTypeFromUri(`data:application/json,${encodeURIComponent('{"agentType":"x"}')}`)).toBe('x');
    expect(declaredTypeFromUri('https://example.com/agent.json')).toBeNull();
    expect(declaredTypeFromUri('data:application/json;base64,!!!')).toBeNull();
    expect(declaredTypeFromUri('data:text/plain,hello')).toBeNull();
  });
});
