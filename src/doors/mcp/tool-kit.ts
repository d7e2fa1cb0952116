/**
 * What every MCP tool body shares: its dependencies (the in-process route caller and the pinned
 * treasury), its typed arguments, the query-string builder and the "payment not used" caveat.
 */
import type { z } from 'zod';
import { TOOL_CAVEAT, type RouteCaller, type ToolCaveat } from './results.js';
import type { ToolArgs } from '../http/schemas/params.js';

export interface ToolDeps {
  call: RouteCaller;
  /** The pinned treasury (`config.treasuryAddress`); null: every challenge is DO_NOT_PAY. */
  treasury: string | null;
}

/** A tool's arguments, typed by its schema in src/doors/http/schemas/params.ts. */
export type Args<K extends keyof typeof ToolArgs> = z.infer<(typeof ToolArgs)[K]>;

export const qs = (params: Record<string, string | number | boolean | undefined>): string => {
  const u = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) u.set(k, String(v));
  const s = u.toString();
  return s ? `?${s}` : '';
};

export const paymentNotUsed: ToolCaveat = {
  code: TOOL_CAVEAT.paymentNotUsed,
  text: 'A payment was given but this answer comes from a free route: it was not sent, nothing was charged.',
};
