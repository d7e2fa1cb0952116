/**
 * The A2A agent card (`GET /.well-known/agent-card.json`), A2A protocol 0.3.0. Built per request
 * from the configuration (BASE_URL can be set after start, e.g. a server on port 0), so `url`
 * always names the `/a2a` endpoint of this deployment. There is only the API host here: the card,
 * the door and the API share BASE_URL (no separate "site host").
 *
 * Field names follow the 0.3 types of @a2a-js/sdk (`AgentCard`), plus `supportedInterfaces[]`
 * (`url`, `transport`, `protocolBinding`) that the contract asks for. `additionalInterfaces[]` (the
 * 0.3 spelling, `url` and `transport`) carries the same single interface so 0.3 clients that
 * negotiate transports from it find JSONRPC too.
 */
import { z } from '@hono/zod-openapi';
import { API_VERSION } from '../http/errors.js';
import { tierById } from '../../payments/pricing.js';

const A2A_PROTOCOL_VERSION = '0.3.0';
const AGENT_NAME = 'ERC-8004 Reputation Index';

const InterfaceSchema = z.object({
  url: z.string().openapi({ description: 'The A2A endpoint (BASE_URL + `/a2a`).' }),
  transport: z.literal('JSONRPC'),
  protocolBinding: z.literal('JSONRPC'),
});

const SkillSchema = z.object({
  id: z.string().openapi({ description: '`vet-wallet` or `index-status`.' }),
  name: z.string(),
  description: z.string(),
  tags: z.array(z.string()),
  examples: z.array(z.string()),
});

export const AgentCardSchema = z
  .object({
    protocolVersion: z.string().openapi({
      description: 'A2A protocol version, independent of the API version.',
      example: A2A_PROTOCOL_VERSION,
    }),
    name: z.string(),
    version: z
      .string()
      .openapi({ description: 'Version of this agent (the API version).', example: API_VERSION }),
    description: z.string(),
    url: z.string().openapi({
      description: 'The JSON-RPC 2.0 endpoint of the A2A door: BASE_URL followed by the path of the door.',
    }),
    preferredTransport: z.literal('JSONRPC'),
    supportedInterfaces: z.array(InterfaceSchema),
    additionalInterfaces: z
      .array(z.object({ url: z.string(), transport: z.literal('JSONRPC') }))
      .openapi({ description: 'The same interface in the A2A 0.3 spelling.' }),
    provider: z.object({ organization: z.string(), url: z.string() }),
    documentationUrl: z.string(),
    capabilities: z.object({
      streaming: z.literal(false),
      pushNotifications: z.literal(false),
      stateTransitionHistory: z.literal(false),
    }),
    supportsAuthenticatedExtendedCard: z.literal(false),
    defaultInputModes: z.array(z.string()),
    defaultOutputModes: z.array(z.string()),
    skills: z.array(SkillSchema),
  })
  .openapi('AgentCard');

type AgentCardBody = z.infer<typeof AgentCardSchema>;

export function agentCard(baseUrl: string): AgentCardBody {
  const base = baseUrl.replace(/\/+$/, '');
  const url = `${base}/a2a`;
  const lookup = tierById('wallet-lookup').price_usd;
  const agent = tierById('agent-detail').price_usd;
  return {
    protocolVersion: A2A_PROTOCOL_VERSION,
    name: AGENT_NAME,
    version: API_VERSION,
    description:
      'Read-only index of ERC-8004 agent reputation across chains. Send an EVM address or a Solana key: the answer is the ' +
      'free per-chain preview (identities, score, ratings and distinct raters per chain), with the paid HTTP routes that ' +
      'decompose it named by path and price. Evidence, not a verdict. Free over A2A; no payment over this door; ' +
      'message/send only, answered by one message (no tasks, no streaming, no memory).',
    url,
    preferredTransport: 'JSONRPC',
    supportedInterfaces: [{ url, transport: 'JSONRPC', protocolBinding: 'JSONRPC' }],
    additionalInterfaces: [{ url, transport: 'JSONRPC' }],
    provider: { organization: AGENT_NAME, url: base },
    documentationUrl: `${base}/docs`,
    capabilities: { streaming: false, pushNotifications: false, stateTransitionHistory: false },
    supportsAuthenticatedExtendedCard: false,
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [
      {
        id: 'vet-wallet',
        name: 'Vet a wallet',
        description:
          'Per-chain reputation preview of a wallet (EVM address or Solana key) or of a Solana agent asset: identities, ' +
          'score (six decimals, null shown as "no ratings yet"), ratings and distinct raters per chain, and the global score. ' +
          `Points at the paid decomposition: GET /reputation/wallet/{wallet} ($${lookup}), GET /reputation/agent/{network}/{agent_id} ($${agent}).`,
        tags: ['reputation', 'erc-8004', 'wallet', 'agent', 'preview'],
        examples: [
          '0x000000000000000000000000000000000000dEaD',
          'Vet 0x000000000000000000000000000000000000dEaD before I pay it',
          '1nc1nerator11111111111111111111111111111111',
        ],
      },
      {
        id: 'index-status',
        name: 'Index status',
        description:
          'The live size of the index (agents, ratings, chains), the scoring policy in force, and how to use this agent and the paid routes.',
        tags: ['status', 'index', 'usage', 'pricing'],
        examples: ['status', 'How big is the index?', 'help'],
      },
    ],
  };
}
