/**
 * The scenario's world: its three networks and chain ids, its calendar, the fixed constants
 * (burn address, tag1 facets, the hostile tag1) and its actors (keys derived from fixed labels).
 */
import { keccak256, stringToHex, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { type LocalNode } from '../local-node.js';
import { type Registries } from '../registries.js';

export type ScenarioNetwork = 'base' | 'optimism' | 'arbitrum';
export const SCENARIO_NETWORKS: readonly ScenarioNetwork[] = ['base', 'optimism', 'arbitrum'];
export const SCENARIO_CHAIN_IDS: Record<ScenarioNetwork, number> = {
  base: 8453,
  optimism: 10,
  arbitrum: 42161,
};

export interface ScenarioNode {
  network: ScenarioNetwork;
  node: LocalNode;
  registries: Registries;
}

/** First day of the scenario: 2026-07-04T00:00:00Z. */
export const SCENARIO_START = Date.UTC(2026, 6, 4) / 1000;
/** Length of the scenario in days: the last actions fall on 2026-10-31 (the day before Nov 1). */
export const SCENARIO_DAYS = 120;
export const BURN_ADDRESS: Address = '0x000000000000000000000000000000000000dEaD';
export const TAG1_FACETS = ['trust', 'liveness', 'contractRisk', 'activity', ''] as const;

/** 500 ASCII characters with markup, script and both quote kinds (escaping test for every surface). */
export const HOSTILE_TAG1: string = (() => {
  const unit = `<script>alert(1)</script> "double" & 'single' <img src=x onerror=alert(2)> `;
  return unit.repeat(Math.ceil(500 / unit.length)).slice(0, 500);
})();

// ------------------------------------------------------------------ actors and randomness

export interface Actor {
  label: string;
  key: Hex;
  address: Address;
}

export const actorCache = new Map<string, Actor>();

/** A wallet whose key derives from a fixed label (demo only: these keys are public). */
export function actor(label: string): Actor {
  let a = actorCache.get(label);
  if (!a) {
    const key = keccak256(stringToHex(`repindex-demo/${label}`));
    a = { label, key, address: privateKeyToAccount(key).address };
    actorCache.set(label, a);
  }
  return a;
}

/**
 * The key of a scenario actor by its address (null: no actor of the played scenario, e.g. the burn
 * address): public demo keys, never for a real network.
 */
export function scenarioKeyOf(address: string): Hex | null {
  for (const a of actorCache.values()) if (a.address.toLowerCase() === address.toLowerCase()) return a.key;
  return null;
}

export function at(day: number, hour = 12, minute = 0): number {
  return SCENARIO_START + day * 86_400 + hour * 3_600 + minute * 60;
}

export const RELAYER = () => actor('relayer');
export const ZERO_HASH: Hex = `0x${'00'.repeat(32)}`;
