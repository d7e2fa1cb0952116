/**
 * Reading a registration file (src/registrations/parse.ts), judging a domain proof
 * (src/registrations/domain-proof.ts) and an A2A card (src/liveness/probes.ts), as pure functions:
 * registration-v1 leniently (the older shapes accepted), failing fields named, the registrations[]
 * entry against the agent's own registry and id, and hostile files (huge, deeply nested, control
 * characters, markup) read without a throw and kept as capped text.
 */
import { describe, expect, it } from 'vitest';
import { agentCardSkills } from '../src/liveness/probes.js';
import { judgeDomainProof } from '../src/registrations/domain-proof.js';
import {
  cleanText,
  jsonDepthExceeds,
  listsAgent,
  MAX_JSON_DEPTH,
  MAX_SERVICES,
  parseRegistration,
  REGISTRATION_TYPE,
  type AgentIdentity,
} from '../src/registrations/parse.js';

const REGISTRY = '0x8004A169FB4a3325136EB29fA0ceB6D2e539a432';
const SELF: AgentIdentity = {
  network: 'base',
  kind: 'evm',
  chainId: 8453,
  identityRegistry: REGISTRY,
  agentId: '22',
};
const SOL: AgentIdentity = {
  network: 'solana',
  kind: 'solana',
  chainId: null,
  identityRegistry: null,
  agentId: 'AssetXYZBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB',
};
const bytes = (v: unknown) => new TextEncoder().encode(typeof v === 'string' ? v : JSON.stringify(v));
const me = [{ agentId: 22, agentRegistry: `eip155:8453:${REGISTRY}` }];

const full = {
  type: REGISTRATION_TYPE,
  name: 'myAgentName',
  description: 'What it does.\nHow it is paid.',
  image: 'https://example.com/agentimage.png',
  services: [
    { name: 'web', endpoint: 'https://web.agentxyz.com/' },
    { name: 'A2A', endpoint: 'https://agent.example/.well-known/agent-card.json', version: '0.3.0' },
    { name: 'MCP', endpoint: 'https://mcp.agent.eth:8443/', version: '2025-06-18' },
    { name: 'OASF', endpoint: 'ipfs://bafycid', version: '0.8' },
    { name: 'ENS', endpoint: 'vitalik.eth', version: 'v1' },
    { name: 'DID', endpoint: 'did:method:foobar' },
    { name: 'email', endpoint: 'mail@myagent.com' },
    { name: 'plain', endpoint: 'http://plain.example/api' },
  ],
  x402Support: false,
  active: true,
  registrations: me,
  supportedTrust: ['reputation', 'crypto-economic', 'tee-attestation'],
};

describe('registration-v1, leniently', () => {
  it('reads the full shape: no problem, every field, a probe kind and host per service', () => {
    const p = parseRegistration(bytes(full), SELF);
    expect(p.problems).toEqual([]);
    expect(p).toMatchObject({
      json: true,
      name: 'myAgentName',
      description: 'What it does.\nHow it is paid.',
      image: 'https://example.com/agentimage.png',
      x402Support: false,
      active: true,
      supportedTrust: ['reputation', 'crypto-economic', 'tee-attestation'],
      registrationsCheck: 'listed',
    });
    expect(p.services.map((s) => [s.type, s.probeKind, s.host, s.https])).toEqual([
      ['web', 'web', 'web.agentxyz.com', true],
      ['A2A', 'a2a', 'agent.example', true],
      ['MCP', 'mcp', 'mcp.agent.eth:8443', true],
      ['OASF', 'none', null, false],
      ['ENS', 'none', null, false],
      ['DID', 'none', null, false],
      ['email', 'none', null, false],
      ['plain', 'web', 'plain.example', false],
    ]);
    expect(p.services[1]!.version).toBe('0.3.0');
  });

  it('accepts the older shapes: endpoints[], lowercase x402support, url for endpoint, a string agentId, a BOM', () => {
    const older = {
      type: ' HTTPS://EIPS.ETHEREUM.ORG/EIPS/eip-8004#registration-v1 ',
      name: 'old',
      endpoints: [{ name: 'MCP', url: 'https://mcp.old.example/' }],
      x402support: true,
      registrations: [{ agentId: '0022', agentRegistry: `EIP155:8453:${REGISTRY.toLowerCase()}` }],
      unknownField: { anything: [1, 2, 3] },
    };
    const p = parseRegistration(bytes(`\uFEFF${JSON.stringify(older)}`), SELF);
    expect(p.problems).toEqual([]);
    expect(p.x402Support).toBe(true);
    expect(p.services).toMatchObject([{ type: 'MCP', url: 'https://mcp.old.example/', probeKind: 'mcp' }]);
    expect(p.registrationsCheck).toBe('listed');
  });

  it('names every failing field', () => {
    const p = parseRegistration(
      bytes({
        type: 'https://example.org/other#v9',
        name: '   ',
        description: 5,
        image: ['x'],
        services: [
          null,
          { name: 'web' },
          { endpoint: 'https://x.example/' },
          { name: 'web', endpoint: 'https://' },
        ],
        x402Support: 'yes',
        active: 1,
        supportedTrust: 'reputation',
        registrations: { agentId: 22 },
      }),
      SELF,
    );
    expect(p.problems).toEqual([
      { field: 'type', problem: 'unexpected_value' },
      { field: 'name', problem: 'empty' },
      { field: 'description', problem: 'not_a_string' },
      { field: 'image', problem: 'not_a_string' },
      { field: 'services[0]', problem: 'not_an_object' },
      { field: 'services[1].endpoint', problem: 'missing' },
      { field: 'services[2].name', problem: 'missing' },
      { field: 'services[3].endpoint', problem: 'bad_url' },
      { field: 'x402Support', problem: 'not_a_boolean' },
      { field: 'active', problem: 'not_a_boolean' },
      { field: 'supportedTrust', problem: 'not_an_array' },
      { field: 'registrations', problem: 'not_an_array' },
    ]);
    expect(parseRegistration(bytes({ name: 'x' }), SELF).problems).toEqual([
      { field: 'type', problem: 'missing' },
    ]);
    expect(parseRegistration(bytes({ type: REGISTRATION_TYPE }), SELF).problems).toEqual([
      { field: 'name', problem: 'missing' },
    ]);
  });

  it('is not a file at all: no JSON, no object, refused before parsing when nested too deep', () => {
    expect(parseRegistration(bytes('<html>hello</html>'), SELF).problems).toEqual([
      { field: '(file)', problem: 'not_json' },
    ]);
    expect(parseRegistration(bytes('[1,2]'), SELF).problems).toEqual([
      { field: '(file)', problem: 'not_an_object' },
    ]);
    expect(parseRegistration(bytes('"name"'), SELF).json).toBe(false);
    // 200 000 levels: would blow a recursive reader's stack; refused by a linear scan instead
    const deep = `{"name":${'['.repeat(200_000)}${']'.repeat(200_000)}}`;
    const t0 = Date.now();
    expect(parseRegistration(bytes(deep), SELF).problems).toEqual([{ field: '(file)', problem: 'too_deep' }]);
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect(jsonDepthExceeds('{"a":"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["}', 4)).toBe(false);
    expect(jsonDepthExceeds('{"a":"\\"[[["}', 1)).toBe(false);
    expect(
      jsonDepthExceeds(`${'['.repeat(MAX_JSON_DEPTH)}${']'.repeat(MAX_JSON_DEPTH)}`, MAX_JSON_DEPTH),
    ).toBe(false);
    expect(jsonDepthExceeds(`${'['.repeat(MAX_JSON_DEPTH + 1)}`, MAX_JSON_DEPTH)).toBe(true);
  });

  it('hostile text is kept as capped text: markup as is, control characters and lone surrogates replaced', () => {
    const p = parseRegistration(
      bytes({
        type: REGISTRATION_TYPE,
        name: `<script>alert(1)</script>\u0000\u0007 x\uD800 ${'n'.repeat(5000)}`,
        description: 'd'.repeat(200_000),
        services: Array.from({ length: MAX_SERVICES + 10 }, (_, i) => ({
          name: `<b>${i}</b>`,
          endpoint: `javascript:alert(${i})`,
        })),
        registrations: me,
      }),
      SELF,
    );
    expect(p.name!.startsWith('<script>alert(1)</script>\uFFFD\uFFFD x\uFFFD n')).toBe(true);
    expect(p.name!.length).toBe(200);
    expect(p.description!.length).toBe(4000);
    expect(p.services).toHaveLength(MAX_SERVICES);
    expect(p.services[0]).toMatchObject({
      type: '<b>0</b>',
      url: 'javascript:alert(0)',
      probeKind: 'none',
      host: null,
    });
    expect(p.problems).toEqual([{ field: 'services', problem: 'too_many' }]);
    expect(cleanText('a\nb\tc', 10)).toBe('a b c');
    expect(cleanText('a\nb', 10, true)).toBe('a\nb');
  });

  it('refuses credentials in an endpoint URL (bad_url, never probed)', () => {
    const p = parseRegistration(
      bytes({
        type: REGISTRATION_TYPE,
        name: 'x',
        services: [{ name: 'web', endpoint: 'https://u:p@x.example/' }],
      }),
      SELF,
    );
    expect(p.problems).toEqual([{ field: 'services[0].endpoint', problem: 'bad_url' }]);
    expect(p.services[0]).toMatchObject({ probeKind: 'none', host: null });
  });
});

describe('the registrations[] entry against the agent itself', () => {
  it('listed only with this registry (any case) on this chain and this id; absent when none; mismatch otherwise', () => {
    expect(listsAgent(me, SELF)).toBe('listed');
    expect(
      listsAgent(
        [{ agentId: 22, agentRegistry: `eip155:8453:${REGISTRY.toUpperCase().replace('0X', '0x')}` }],
        SELF,
      ),
    ).toBe('listed');
    expect(listsAgent(undefined, SELF)).toBe('absent');
    expect(listsAgent([], SELF)).toBe('absent');
    expect(listsAgent([{ agentId: 23, agentRegistry: `eip155:8453:${REGISTRY}` }], SELF)).toBe('mismatch');
    expect(listsAgent([{ agentId: 22, agentRegistry: `eip155:1:${REGISTRY}` }], SELF)).toBe('mismatch');
    expect(
      listsAgent(
        [{ agentId: 22, agentRegistry: 'eip155:8453:0x0000000000000000000000000000000000000001' }],
        SELF,
      ),
    ).toBe('mismatch');
    expect(listsAgent([{ agentId: 22.5, agentRegistry: `eip155:8453:${REGISTRY}` }], SELF)).toBe('mismatch');
    // several registrations (other chains): one of them is enough
    expect(listsAgent([{ agentId: 1, agentRegistry: `eip155:1:${REGISTRY}` }, ...me], SELF)).toBe('listed');
    // on Solana the asset key names the agent by itself
    expect(listsAgent([{ agentId: SOL.agentId, agentRegistry: 'solana:anything' }], SOL)).toBe('listed');
    expect(listsAgent([{ agentId: 'AnotherAsset', agentRegistry: 'solana:x' }], SOL)).toBe('mismatch');
    const p = parseRegistration(
      bytes({ ...full, registrations: [{ agentId: 7, agentRegistry: `eip155:8453:${REGISTRY}` }] }),
      SELF,
    );
    expect(p.registrationsCheck).toBe('mismatch');
    expect(p.problems).toEqual([{ field: 'registrations', problem: 'does_not_list_this_agent' }]);
    const none = parseRegistration(bytes({ ...full, registrations: undefined }), SELF);
    expect(none.registrationsCheck).toBe('absent');
    expect(none.problems).toEqual([]);
  });
});

describe('a domain proof, judged', () => {
  const ok = (doc: unknown, finalUrl = 'https://agent.example/.well-known/agent-registration.json') =>
    ({ ok: true, bytes: bytes(doc), contentType: 'application/json', finalUrl }) as const;
  const failed = (code: string, retryable: boolean, detail?: string) =>
    ({ ok: false, code, retryable, ...(detail ? { detail } : {}) }) as never;
  it('verified, mismatch, absent, unreachable', () => {
    expect(judgeDomainProof(ok({ registrations: me }), 'agent.example', SELF)).toEqual({
      proof: 'verified',
      reason: null,
    });
    expect(
      judgeDomainProof(ok({ registrations: [{ agentId: 1, agentRegistry: 'x' }] }), 'agent.example', SELF)
        .proof,
    ).toBe('mismatch');
    expect(judgeDomainProof(ok({ name: 'no registrations' }), 'agent.example', SELF).proof).toBe('mismatch');
    expect(judgeDomainProof(ok('<html>'), 'agent.example', SELF)).toEqual({
      proof: 'absent',
      reason: 'not_json',
    });
    expect(
      judgeDomainProof(
        ok({ registrations: me }, 'https://elsewhere.example/.well-known/agent-registration.json'),
        'agent.example',
        SELF,
      ),
    ).toEqual({ proof: 'absent', reason: 'redirected_off_host' });
    expect(judgeDomainProof(failed('http_error', false, 'HTTP 404'), 'agent.example', SELF)).toEqual({
      proof: 'absent',
      reason: 'HTTP 404',
    });
    expect(judgeDomainProof(failed('bad_content_type', false), 'agent.example', SELF).proof).toBe('absent');
    expect(judgeDomainProof(failed('too_large', false), 'agent.example', SELF).proof).toBe('mismatch');
    for (const code of [
      'http_error',
      'timeout',
      'dns_failed',
      'connect_failed',
      'blocked_address',
      'too_many_redirects',
    ])
      expect(judgeDomainProof(failed(code, true, 'HTTP 503'), 'agent.example', SELF).proof, code).toBe(
        'unreachable',
      );
  });
});

describe('an A2A agent card', () => {
  it('is an object with a name and a skills array; its skills are counted', () => {
    expect(agentCardSkills({ name: 'A', skills: [{ id: 'a' }, { name: 'b' }, 'junk', null] })).toBe(2);
    expect(agentCardSkills({ name: 'A', skills: [] })).toBe(0);
    expect(agentCardSkills({ name: '', skills: [] })).toBeNull();
    expect(agentCardSkills({ name: 'A' })).toBeNull();
    expect(agentCardSkills({ skills: [{ id: 'a' }] })).toBeNull();
  });
});
