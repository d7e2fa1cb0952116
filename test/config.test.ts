import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';
import { NETWORKS } from '../src/chains.js';
import { tempDir } from './helpers/tmp.js';

function chainsFile(content: string): string {
  const dir = tempDir('repindex-cfg-');
  const p = join(dir, 'chains.json');
  writeFileSync(p, content);
  return p;
}

describe('configuration', () => {
  it('has the documented defaults', () => {
    const c = loadConfig({});
    expect(c.databaseUrl).toBeNull();
    expect(c.dataDir).toBe('./data');
    expect(c.port).toBe(8080);
    expect(c.host).toBe('127.0.0.1');
    expect(c.baseUrl).toBe('http://127.0.0.1:8080');
    expect(c.indexerPeriodSeconds).toBe(3600);
    expect(c.receiptReuseSeconds).toBe(900);
    expect(c.treasuryAddress).toBeNull();
    expect(c.rateLimit).toEqual({ rate: 50, burst: 40 });
    expect(c.rpcRetryBaseMs).toBe(250);
    expect(c.rpcMaxAttempts).toBe(5);
  });

  it('reads the feedback-document settings, with their documented defaults', () => {
    const d = loadConfig({}).feedbackFetch;
    expect(d).toMatchObject({
      enabled: true,
      ipfsGateway: null,
      maxBytes: 262144,
      timeoutMs: 10000,
      maxRedirects: 3,
      allowPrivate: false,
      maxAttempts: 5,
      retryBaseSeconds: 60,
      recheckSeconds: 604800,
      periodSeconds: 60,
      batch: 20,
      concurrency: 4,
    });
    const c = loadConfig({
      FEEDBACK_FETCH: '0',
      FEEDBACK_IPFS_GATEWAY: 'https://gw.example/ipfs/',
      FEEDBACK_ALLOW_PRIVATE: 'true',
      KNOWN_RELAYERS:
        ' 0xAbCdEf0123456789aBcDeF0123456789AbCdEf01 ,0x0000000000000000000000000000000000000001',
    });
    expect(c.feedbackFetch).toMatchObject({
      enabled: false,
      ipfsGateway: 'https://gw.example/ipfs/',
      allowPrivate: true,
    });
    expect(c.knownRelayers).toEqual([
      '0xabcdef0123456789abcdef0123456789abcdef01',
      '0x0000000000000000000000000000000000000001',
    ]);
  });

  it('reads the registration-file and liveness settings, with their documented defaults', () => {
    expect(loadConfig({}).registrations).toEqual({
      enabled: true,
      recheckSeconds: 86400,
      periodSeconds: 60,
      liveness: true,
      livenessRecheckSeconds: 21600,
      livenessHostIntervalSeconds: 2,
      livenessTimeoutMs: 10000,
    });
    expect(
      loadConfig({
        REGISTRATION_FETCH: '0',
        REGISTRATION_RECHECK_SECONDS: '3600',
        REGISTRATION_FETCH_PERIOD_SECONDS: '5',
        LIVENESS_PROBES: '0',
        LIVENESS_RECHECK_SECONDS: '600',
        LIVENESS_HOST_INTERVAL_SECONDS: '0',
        LIVENESS_TIMEOUT_MS: '2500',
      }).registrations,
    ).toEqual({
      enabled: false,
      recheckSeconds: 3600,
      periodSeconds: 5,
      liveness: false,
      livenessRecheckSeconds: 600,
      livenessHostIntervalSeconds: 0,
      livenessTimeoutMs: 2500,
    });
  });

  it('reads the RPC retry policy', () => {
    const c = loadConfig({ RPC_RETRY_BASE_MS: '10', RPC_MAX_ATTEMPTS: '2' });
    expect(c.rpcRetryBaseMs).toBe(10);
    expect(c.rpcMaxAttempts).toBe(2);
  });

  it('reads the census settings: on, a full census every pass in batches of 1000, a sample of 16 between, by default', () => {
    expect(loadConfig({}).census).toEqual({
      enabled: true,
      sample: 16,
      seed: null,
      fullEvery: 1,
      batch: 1000,
    });
    expect(
      loadConfig({
        CENSUS: '0',
        CENSUS_SAMPLE: '4',
        CENSUS_SEED: '42',
        CENSUS_FULL_EVERY: '24',
        CENSUS_BATCH: '200',
      }).census,
    ).toEqual({ enabled: false, sample: 4, seed: 42, fullEvery: 24, batch: 200 });
    expect(() => loadConfig({ CENSUS_FULL_EVERY: '0' })).toThrow(/CENSUS_FULL_EVERY/);
    expect(() => loadConfig({ CENSUS_BATCH: 'many' })).toThrow(/CENSUS_BATCH/);
  });

  it('lists all 11 networks with chain ids and the registry addresses', () => {
    const c = loadConfig({});
    expect(c.chains.map((ch) => ch.network)).toEqual([...NETWORKS]);
    expect(c.chains).toHaveLength(11);
    const base = c.chains.find((ch) => ch.network === 'base')!;
    expect(base).toMatchObject({
      chainId: 8453,
      identityRegistry: '0x8004A169FB4a3325136EB29fA0ceB6D2e539a432',
      reputationRegistry: '0x8004BAa17C55a88189AE136b182e5fdA19dE9b63',
      startBlock: 41_663_799,
      confirmations: 12,
      enabled: true,
    });
    const sol = c.chains.find((ch) => ch.network === 'solana')!;
    expect(sol.kind).toBe('solana');
    expect(sol.programId).toBe('8oo4dC4JvBLwy5tGgiH3WwK4B9PWxL9Z4XjA2jzkQMbQ');
    for (const ch of c.chains.filter((x) => x.kind === 'evm')) expect(ch.chainId).toBeGreaterThan(0);
  });

  it.each([
    [{ PORT: 'abc' }, /PORT must be an integer/],
    [{ PORT: '70000' }, /PORT must be between/],
    [{ DATABASE_URL: 'not a url' }, /DATABASE_URL is not a valid URL/],
    [{ DATABASE_URL: 'mysql://x@y/z' }, /DATABASE_URL must use postgres/],
    [{ INDEXER_PERIOD_SECONDS: '-5' }, /INDEXER_PERIOD_SECONDS must be an integer/],
    [{ RECEIPT_REUSE_SECONDS: '100' }, /RECEIPT_REUSE_SECONDS must be between 300 and 1800/],
    [{ TREASURY_ADDRESS: '0x123' }, /TREASURY_ADDRESS must be an EVM address/],
    [{ RPC_URL_BASE: 'nope' }, /RPC_URL_BASE is not a valid URL/],
    [{ RPC_RETRY_BASE_MS: 'soon' }, /RPC_RETRY_BASE_MS must be an integer/],
    [{ RPC_RETRY_BASE_MS: '0' }, /RPC_RETRY_BASE_MS must be between 1 and 60000/],
    [{ RPC_MAX_ATTEMPTS: '21' }, /RPC_MAX_ATTEMPTS must be between 1 and 20/],
    [{ CENSUS: 'yes' }, /CENSUS must be 1 or 0/],
    [{ CENSUS_SAMPLE: '10001' }, /CENSUS_SAMPLE must be between 0 and 10000/],
    [{ FEEDBACK_FETCH: 'maybe' }, /FEEDBACK_FETCH must be 1 or 0/],
    [{ FEEDBACK_IPFS_GATEWAY: 'ftp://g/ipfs/' }, /FEEDBACK_IPFS_GATEWAY must use http: or https:/],
    [{ FEEDBACK_MAX_BYTES: '10' }, /FEEDBACK_MAX_BYTES must be between 1024 and 16777216/],
    [{ FEEDBACK_MAX_REDIRECTS: '11' }, /FEEDBACK_MAX_REDIRECTS must be between 0 and 10/],
    [{ FEEDBACK_ALLOW_PRIVATE: 'yes' }, /FEEDBACK_ALLOW_PRIVATE must be 1 or 0/],
    [{ KNOWN_RELAYERS: '0x12,0xab' }, /KNOWN_RELAYERS must be comma-separated EVM addresses/],
    [{ REGISTRATION_FETCH: 'sometimes' }, /REGISTRATION_FETCH must be 1 or 0/],
    [{ REGISTRATION_RECHECK_SECONDS: '59' }, /REGISTRATION_RECHECK_SECONDS must be between 60 and 31536000/],
    [{ LIVENESS_PROBES: 'on' }, /LIVENESS_PROBES must be 1 or 0/],
    [{ LIVENESS_HOST_INTERVAL_SECONDS: '3601' }, /LIVENESS_HOST_INTERVAL_SECONDS must be between 0 and 3600/],
    [{ LIVENESS_TIMEOUT_MS: '50' }, /LIVENESS_TIMEOUT_MS must be between 100 and 120000/],
  ])('rejects %o with a clear message', (env, re) => {
    expect(() => loadConfig(env)).toThrowError(ConfigError);
    expect(() => loadConfig(env)).toThrowError(re);
  });

  it('rejects a CHAINS_FILE that is not JSON, names an unknown network or an unknown field', () => {
    expect(() => loadConfig({ CHAINS_FILE: chainsFile('{nope') })).toThrowError(
      /CHAINS_FILE is not valid JSON/,
    );
    expect(() => loadConfig({ CHAINS_FILE: chainsFile('{"basee": {}}') })).toThrowError(
      /unknown network "basee"/,
    );
    expect(() => loadConfig({ CHAINS_FILE: chainsFile('{"base": {"rpc": "http://x"}}') })).toThrowError(
      /CHAINS_FILE base/,
    );
    expect(() => loadConfig({ CHAINS_FILE: chainsFile('{"base": {"startBlock": -1}}') })).toThrowError(
      /CHAINS_FILE base\.startBlock/,
    );
    expect(() => loadConfig({ CHAINS_FILE: '/nonexistent/chains.json' })).toThrowError(
      /CHAINS_FILE cannot be read/,
    );
  });

  it('merges CHAINS_FILE and RPC_URL_<NETWORK> over the built-in table', () => {
    const file = chainsFile(
      JSON.stringify({
        base: { rpcUrl: 'http://127.0.0.1:9999', startBlock: 5, confirmations: 0 },
        celo: { enabled: false },
      }),
    );
    const c = loadConfig({ CHAINS_FILE: file, RPC_URL_OPTIMISM: 'http://127.0.0.1:7777' });
    expect(c.chains.find((x) => x.network === 'base')).toMatchObject({
      rpcUrl: 'http://127.0.0.1:9999',
      startBlock: 5,
      confirmations: 0,
      chainId: 8453,
    });
    expect(c.chains.find((x) => x.network === 'celo')!.enabled).toBe(false);
    expect(c.chains.find((x) => x.network === 'optimism')!.rpcUrl).toBe('http://127.0.0.1:7777');
  });
});
