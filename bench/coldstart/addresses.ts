/** The registries the synthetic chains of `bench:coldstart` serve: the built-in ones of src/chains.ts, lower-cased. */
import { builtInChains, MULTICALL3_ADDRESS } from '../../src/chains.js';

const base = builtInChains().base;
export const IDENTITY_REGISTRY = base.identityRegistry!.toLowerCase();
export const REPUTATION_REGISTRY = base.reputationRegistry!.toLowerCase();
export const MULTICALL3 = MULTICALL3_ADDRESS.toLowerCase();
