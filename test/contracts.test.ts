/**
 * The project's own ERC-8004 registries (contracts/*.sol) on the in-process EDR node, seen the way
 * the indexer sees them: through viem over HTTP. Also checks that the demo scenario, as the run's
 * demo index build played it, left on its chains what its facts say.
 */
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  createPublicClient,
  encodeFunctionData,
  http,
  parseEventLogs,
  toEventSelector,
  toEventSignature,
  toFunctionSignature,
  type AbiEvent,
  type AbiFunction,
  type Address,
  type Hex,
  type PublicClient,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { startLocalNode, type LocalNode } from '../src/demo/local-node.js';
import {
  deployRegistries,
  giveFeedback,
  giveFeedbackCall,
  identityRegistryAbi,
  identityRegistryArtifact,
  registerAgent,
  reputationRegistryAbi,
  reputationRegistryArtifact,
  revokeFeedback,
  sendCall,
  sendCallsInBlock,
  setAgentURI,
  setMetadata,
  transferAgent,
  type Registries,
} from '../src/demo/registries.js';
import { awaitCompiledContracts } from './helpers/contracts-fixture.js';
import { SCENARIO_CHAIN_IDS, SCENARIO_NETWORKS, SCENARIO_START } from '../src/demo/scenario.js';
import { playedDemo } from './helpers/demo.js';
import type { DemoFixtureFile } from './helpers/demo-fixture.js';

const NEW_FEEDBACK_TOPIC0 = '0x6a4a61743519c9d648a14e6493f47dbe3ff1aa29e7785c96c8326a205e58febc';
const FEEDBACK_REVOKED_TOPIC0 = '0x25156fd3288212246d8b008d5921fde376c71ed14ac2e072a506eb06fde6d09d';
const DEAD: Address = '0x000000000000000000000000000000000000dEaD';

function signatures(abi: readonly unknown[]): string[] {
  const out: string[] = [];
  for (const item of abi as { type: string }[]) {
    if (item.type === 'event') out.push(toEventSignature(item as AbiEvent));
    else if (item.type === 'function') out.push(toFunctionSignature(item as AbiFunction));
  }
  return out.sort();
}

describe('artifacts', () => {
  it('are what contracts/build.ts produces from the current sources', async () => {
    // Compiled in this run by `contracts/build.ts --out` (global setup starts it first).
    const fresh = await awaitCompiledContracts(inject('compiledContracts'));
    expect([...fresh.keys()].sort()).toEqual([
      'IdentityRegistry.json',
      'Multicall3.json',
      'ReputationRegistry.json',
      'TestUSDC.json',
    ]);
    for (const [file, text] of fresh) {
      const committed = await readFile(new URL(`../contracts/artifacts/${file}`, import.meta.url), 'utf8');
      expect(committed, file).toBe(text);
    }
  }, 300_000);

  it('match the typed ABIs used by the code', () => {
    expect(signatures(identityRegistryAbi)).toEqual(signatures(identityRegistryArtifact.abi));
    expect(signatures(reputationRegistryAbi)).toEqual(signatures(reputationRegistryArtifact.abi));
  });

  it('have the mainnet topic0 values', () => {
    const topic = (abi: readonly unknown[], name: string) =>
      toEventSelector((abi as AbiEvent[]).find((e) => e.type === 'event' && e.name === name)!);
    expect(topic(reputationRegistryArtifact.abi, 'NewFeedback')).toBe(NEW_FEEDBACK_TOPIC0);
    expect(topic(reputationRegistryArtifact.abi, 'FeedbackRevoked')).toBe(FEEDBACK_REVOKED_TOPIC0);
    expect(topic(identityRegistryArtifact.abi, 'Registered')).toBe(
      toEventSelector('Registered(uint256,string,address)'),
    );
    expect(topic(identityRegistryArtifact.abi, 'MetadataSet')).toBe(
      toEventSelector('MetadataSet(uint256,string,string,bytes)'),
    );
    expect(topic(identityRegistryArtifact.abi, 'URIUpdated')).toBe(
      toEventSelector('URIUpdated(uint256,string,address)'),
    );
    expect(topic(identityRegistryArtifact.abi, 'Transfer')).toBe(
      toEventSelector('Transfer(address,address,uint256)'),
    );
    expect(topic(reputationRegistryArtifact.abi, 'ResponseAppended')).toBe(
      toEventSelector('ResponseAppended(uint256,address,uint64,address,string,bytes32)'),
    );
  });
});

describe('registries on a local node', () => {
  let node: LocalNode;
  let reg: Registries;
  let client: PublicClient;
  let keys: Hex[];
  const addr = (i: number) => privateKeyToAccount(keys[i]!).address;

  beforeAll(async () => {
    node = await startLocalNode({ chainId: 8453 });
    reg = await deployRegistries(node.rpcUrl, node.privateKeys[0]!);
    client = createPublicClient({ transport: http(node.rpcUrl) });
    keys = node.privateKeys;
  });
  afterAll(async () => {
    await node?.close();
  });

  it('register mints to the caller and logs Transfer, MetadataUpdate, Registered, MetadataSet(agentWallet)', async () => {
    const first = await registerAgent(reg, keys[1]!, 'https://a.example/0.json');
    const second = await registerAgent(reg, keys[1]!, 'https://a.example/1.json', {
      metadata: [{ key: 'type', value: 'assistant' }],
    });
    expect(first.agentId).toBe(0n);
    expect(second.agentId).toBe(1n);

    const logs = await client.getLogs({
      address: reg.identityRegistry,
      fromBlock: first.blockNumber,
      toBlock: first.blockNumber,
    });
    const parsed = parseEventLogs({ abi: identityRegistryAbi, logs });
    expect(parsed.map((l) => l.eventName)).toEqual([
      'Transfer',
      'MetadataUpdate',
      'Registered',
      'MetadataSet',
    ]);
    const [transfer, , registered, wallet] = parsed;
    expect(transfer!.args).toMatchObject({
      from: '0x0000000000000000000000000000000000000000',
      to: addr(1),
      tokenId: 0n,
    });
    expect(registered!.args).toEqual({ agentId: 0n, agentURI: 'https://a.example/0.json', owner: addr(1) });
    expect(wallet!.args).toMatchObject({
      agentId: 0n,
      metadataKey: 'agentWallet',
      metadataValue: addr(1).toLowerCase(),
    });

    const typed = await client.getContractEvents({
      address: reg.identityRegistry,
      abi: identityRegistryAbi,
      eventName: 'MetadataSet',
      args: { agentId: 1n },
      fromBlock: second.blockNumber,
    });
    expect(typed.map((l) => [l.args.metadataKey, l.args.metadataValue])).toEqual([
      ['agentWallet', addr(1).toLowerCase()],
      ['type', '0x617373697374616e74'], // "assistant"
    ]);
    await setMetadata(reg, keys[1]!, 0, 'type', 'trading');
    expect(
      await client.readContract({
        address: reg.identityRegistry,
        abi: identityRegistryAbi,
        functionName: 'getMetadata',
        args: [0n, 'type'],
      }),
    ).toBe('0x74726164696e67');
    await expect(setMetadata(reg, keys[2]!, 0, 'type', 'x')).rejects.toThrow(/Not authorized/);
    await expect(setMetadata(reg, keys[1]!, 0, 'agentWallet', '0x00')).rejects.toThrow(/reserved key/);
  });

  it('a transfer clears agentWallet before the Transfer log; 0x…dEaD can own, 0x0 cannot', async () => {
    const { agentId } = await registerAgent(reg, keys[1]!, 'https://a.example/t.json');
    const moved = await transferAgent(reg, keys[1]!, agentId, addr(2));
    const logs = parseEventLogs({
      abi: identityRegistryAbi,
      logs: await client.getLogs({
        address: reg.identityRegistry,
        fromBlock: moved.blockNumber,
        toBlock: moved.blockNumber,
      }),
    });
    expect(logs.map((l) => l.eventName)).toEqual(['MetadataSet', 'Transfer']);
    expect(logs[0]!.args).toMatchObject({ metadataKey: 'agentWallet', metadataValue: '0x' });
    expect(logs[1]!.args).toEqual({ from: addr(1), to: addr(2), tokenId: agentId });

    await transferAgent(reg, keys[2]!, agentId, DEAD);
    expect(
      await client.readContract({
        address: reg.identityRegistry,
        abi: identityRegistryAbi,
        functionName: 'ownerOf',
        args: [agentId],
      }),
    ).toBe(DEAD);
    const { agentId: other } = await registerAgent(reg, keys[1]!, '');
    await expect(
      transferAgent(reg, keys[1]!, other, '0x0000000000000000000000000000000000000000'),
    ).rejects.toThrow(/zero receiver/);
    // The dEaD-owned agent can still be rated.
    await giveFeedback(reg, keys[3]!, { agentId, value: 70, tag1: 'trust' });
  });

  it('setAgentURI is for the owner and logs URIUpdated', async () => {
    const { agentId } = await registerAgent(reg, keys[1]!, 'https://a.example/u.json');
    const res = await setAgentURI(reg, keys[1]!, agentId, 'ipfs://bafy/new.json');
    const [log] = await client.getContractEvents({
      address: reg.identityRegistry,
      abi: identityRegistryAbi,
      eventName: 'URIUpdated',
      fromBlock: res.blockNumber,
      toBlock: res.blockNumber,
    });
    expect(log!.args).toEqual({ agentId, newURI: 'ipfs://bafy/new.json', updatedBy: addr(1) });
    await expect(setAgentURI(reg, keys[2]!, agentId, 'x')).rejects.toThrow(/Not authorized/);
  });

  it('feedbackIndex counts per (agent, client) from 1; NewFeedback carries the mainnet topic0', async () => {
    const { agentId: a } = await registerAgent(reg, keys[1]!, 'https://a.example/fa.json');
    const { agentId: b } = await registerAgent(reg, keys[1]!, 'https://a.example/fb.json');
    const sent = [
      await giveFeedback(reg, keys[4]!, { agentId: a, value: 90, tag1: 'trust' }),
      await giveFeedback(reg, keys[4]!, { agentId: a, value: 0, tag1: 'liveness' }),
      await giveFeedback(reg, keys[5]!, { agentId: a, value: -5, valueDecimals: 1, tag1: 'trust' }),
      await giveFeedback(reg, keys[4]!, { agentId: b, value: 8750, valueDecimals: 2, tag1: '' }),
    ];
    const logs = await client.getLogs({
      address: reg.reputationRegistry,
      fromBlock: sent[0]!.blockNumber,
      toBlock: sent[3]!.blockNumber,
    });
    expect(logs.every((l) => l.topics[0] === NEW_FEEDBACK_TOPIC0)).toBe(true);
    const parsed = parseEventLogs({ abi: reputationRegistryAbi, eventName: 'NewFeedback', logs });
    expect(
      parsed.map((l) => [l.args.agentId, l.args.clientAddress, l.args.feedbackIndex, l.args.value]),
    ).toEqual([
      [a, addr(4), 1n, 90n],
      [a, addr(4), 2n, 0n],
      [a, addr(5), 1n, -5n],
      [b, addr(4), 1n, 8750n],
    ]);
    expect(parsed[3]!.args.valueDecimals).toBe(2);
    expect(
      await client.readContract({
        address: reg.reputationRegistry,
        abi: reputationRegistryAbi,
        functionName: 'getLastIndex',
        args: [a, addr(4)],
      }),
    ).toBe(2n);
  });

  it('refuses ratings from the owner and its approved operators, and out-of-range values', async () => {
    const { agentId } = await registerAgent(reg, keys[1]!, 'https://a.example/self.json');
    await expect(giveFeedback(reg, keys[1]!, { agentId, value: 100 })).rejects.toThrow(
      /Self-feedback not allowed/,
    );

    const approve = encodeFunctionData({
      abi: identityRegistryAbi,
      functionName: 'approve',
      args: [addr(6), agentId],
    });
    await sendCall(node.rpcUrl, keys[1]!, { to: reg.identityRegistry, data: approve });
    await expect(giveFeedback(reg, keys[6]!, { agentId, value: 100 })).rejects.toThrow(
      /Self-feedback not allowed/,
    );

    const operator = encodeFunctionData({
      abi: identityRegistryAbi,
      functionName: 'setApprovalForAll',
      args: [addr(7), true],
    });
    await sendCall(node.rpcUrl, keys[1]!, { to: reg.identityRegistry, data: operator });
    await expect(giveFeedback(reg, keys[7]!, { agentId, value: 100 })).rejects.toThrow(
      /Self-feedback not allowed/,
    );

    await expect(giveFeedback(reg, keys[3]!, { agentId, value: 1, valueDecimals: 19 })).rejects.toThrow(
      /too many decimals/,
    );
    await expect(giveFeedback(reg, keys[3]!, { agentId, value: 10n ** 38n + 1n })).rejects.toThrow(
      /value out of range/,
    );
    await expect(giveFeedback(reg, keys[3]!, { agentId, value: -(10n ** 38n) - 1n })).rejects.toThrow(
      /value out of range/,
    );
    await expect(giveFeedback(reg, keys[3]!, { agentId: 9_999, value: 1 })).rejects.toThrow(/unknown agent/);
    await giveFeedback(reg, keys[3]!, { agentId, value: 10n ** 38n, valueDecimals: 18 });
    await giveFeedback(reg, keys[3]!, { agentId, value: -(10n ** 38n) });
  });

  it('only the original client revokes, once; FeedbackRevoked carries the mainnet topic0', async () => {
    const { agentId } = await registerAgent(reg, keys[1]!, 'https://a.example/rv.json');
    await giveFeedback(reg, keys[8]!, { agentId, value: 40 });
    await expect(revokeFeedback(reg, keys[9]!, agentId, 1)).rejects.toThrow(/index out of bounds/);
    await expect(revokeFeedback(reg, keys[1]!, agentId, 1)).rejects.toThrow(/index out of bounds/);
    const res = await revokeFeedback(reg, keys[8]!, agentId, 1);
    await expect(revokeFeedback(reg, keys[8]!, agentId, 1)).rejects.toThrow(/Already revoked/);

    const [log] = await client.getLogs({
      address: reg.reputationRegistry,
      fromBlock: res.blockNumber,
      toBlock: res.blockNumber,
    });
    expect(log!.topics[0]).toBe(FEEDBACK_REVOKED_TOPIC0);
    const [parsed] = parseEventLogs({
      abi: reputationRegistryAbi,
      eventName: 'FeedbackRevoked',
      logs: [log!],
    });
    expect(parsed!.args).toEqual({ agentId, clientAddress: addr(8), feedbackIndex: 1n });
    const read = await client.readContract({
      address: reg.reputationRegistry,
      abi: reputationRegistryAbi,
      functionName: 'readFeedback',
      args: [agentId, addr(8), 1n],
    });
    expect(read[4]).toBe(true);
  });

  it('sendCallsInBlock puts several transactions into one block at a chosen time', async () => {
    const { agentId } = await registerAgent(reg, keys[1]!, 'https://a.example/blk.json');
    const latest = await client.getBlock();
    const timestamp = Number(latest.timestamp) + 3_600;
    const results = await sendCallsInBlock(
      node.rpcUrl,
      [4, 5, 4].map((k, i) => ({
        signer: keys[k]!,
        call: giveFeedbackCall(reg, { agentId, value: 50 + i }),
      })),
      { timestamp },
    );
    expect(new Set(results.map((r) => r.blockNumber)).size).toBe(1);
    const block = await client.getBlock({ blockNumber: results[0]!.blockNumber });
    expect(Number(block.timestamp)).toBe(timestamp);
    expect(block.transactions).toEqual(results.map((r) => r.txHash));
    // Automine is back on afterwards.
    const after = await giveFeedback(reg, keys[5]!, { agentId, value: 1 });
    expect(after.blockNumber).toBe(results[0]!.blockNumber + 1n);
  });
});

describe('demo scenario', () => {
  // Played once per run, by the demo index build (helpers/demo-fixture.ts): its facts, and its
  // chains as their nodes answered over RPC before they closed.
  let played: DemoFixtureFile;

  beforeAll(async () => {
    played = await playedDemo();
  }, 300_000);

  it('plays the required volume within the time window', () => {
    const { facts } = played;
    expect(Object.fromEntries(played.chains.map((c) => [c.network, c.chainId]))).toEqual(
      Object.fromEntries(SCENARIO_NETWORKS.map((n) => [n, SCENARIO_CHAIN_IDS[n]])),
    );
    expect(facts.totals.agents).toBeGreaterThanOrEqual(30);
    expect(facts.totals.ratings).toBeGreaterThanOrEqual(300);
    expect(facts.startTimestamp).toBe(SCENARIO_START);
    expect(facts.endTimestamp).toBeLessThan(Date.UTC(2026, 10, 1) / 1000);
    expect(facts.endTimestamp).toBeGreaterThan(Date.UTC(2026, 9, 25) / 1000);
    expect(facts.campaign.ratings).toBeGreaterThanOrEqual(20);
    expect(facts.hostileTag1.tag1).toHaveLength(500);
    expect(facts.hostileTag1.tag1).toContain('<script>alert(1)</script>');
    expect(facts.hostileTag1.tag1).toMatch(/"/);
    expect(facts.hostileTag1.tag1).toMatch(/'/);
    expect(new Set(facts.ratings.map((r) => r.tag1))).toEqual(
      new Set([...facts.tag1Facets, facts.hostileTag1.tag1]),
    );
    expect(facts.feedbackHosts).toContain('');
    expect(facts.feedbackHosts.filter((h) => h !== '').length).toBeGreaterThanOrEqual(3);
    expect(facts.multiChainOwner.agents.map((a) => a.network)).toEqual(
      expect.arrayContaining(['base', 'optimism', 'arbitrum']),
    );
    expect(facts.sameAgentIdOnTwoChains.owners[0]!.owner).not.toBe(
      facts.sameAgentIdOnTwoChains.owners[1]!.owner,
    );
    expect(facts.selfRater.selfRatings).toBeGreaterThan(0);
    expect(facts.transferredAgent.ratingsBefore).toBeGreaterThan(0);
    expect(facts.burnOwnedAgent.ratings).toBeGreaterThan(0);
    expect(facts.revoked.length).toBeGreaterThanOrEqual(5);
    expect(facts.unratedOwner.agents.length).toBeGreaterThan(0);
    const unrated = facts.agents.filter((a) => a.owner === facts.unratedOwner.address);
    expect(unrated.every((a) => a.ratings === 0)).toBe(true);
    expect(facts.agents.every((a) => a.minter === facts.relayer && a.owners[0] === facts.relayer)).toBe(true);
    console.info(`scenario: ${facts.totals.transactions} transactions in ${played.timings.scenarioMs} ms`);
  });

  it('leaves on chain exactly the events its facts describe', () => {
    const { facts, onChain } = played;
    expect(Object.keys(onChain).sort()).toEqual([...SCENARIO_NETWORKS].sort());
    for (const network of SCENARIO_NETWORKS) {
      const chain = facts.chains[network];
      const seen = onChain[network]!;
      expect(seen.feedback).toHaveLength(chain.ratings);
      expect(seen.revocations).toBe(chain.revocations);
      expect(seen.registeredOwners).toHaveLength(chain.agents);
      expect(seen.registeredOwners.every((o) => o === facts.relayer)).toBe(true);
      const expected = facts.ratings.filter((r) => r.network === network);
      expect(seen.feedback).toEqual(
        expected.map((r) => [r.agentId, r.rater, r.feedbackIndex, r.value, r.tag1, r.txHash]),
      );
      expect(seen.lastBlockTimestamp).toBeLessThanOrEqual(facts.endTimestamp);
      // Every agent's owner on chain is the last owner its facts record.
      for (const a of facts.agents.filter((x) => x.network === network)) {
        expect(seen.ownerOf[a.agentId], `${network} #${a.agentId}`).toBe(a.owners[a.owners.length - 1]);
      }
    }
    const ownerOnBase = (agentId: number) => onChain['base']!.ownerOf[agentId];
    expect(ownerOnBase(facts.burnOwnedAgent.agentId)).toBe(DEAD);
    expect(ownerOnBase(facts.selfRater.agentId)).toBe(facts.selfRater.address);
    expect(ownerOnBase(facts.transferredAgent.agentId)).toBe(facts.transferredAgent.newOwner);
  });
});
