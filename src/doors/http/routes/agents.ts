/**
 * `GET /agents/{network}/{agent_id}/registration` (free): what one agent declares about itself in
 * its registration file, the file's state, and per service the domain proof and the liveness the
 * index observed (src/read/registrations.ts; served by src/paid/registration.ts, as in the paid
 * agent detail). Where a named subject is and what it says about itself, never a decomposition of
 * its ratings: free, like `/search/{q}`. The explorer's agent page reads it.
 */
import { createRoute, z } from '@hono/zod-openapi';
import { readerOf } from '../../../db/database.js';
import { normalizeAgentId } from '../../../identifiers.js';
import { resolveNetwork } from '../../../request-params.js';
import { agentIsIndexed } from '../../../read/agent.js';
import { readAgentHead, readAgentRegistration } from '../../../read/registrations.js';
import { servedRegistration } from '../../../paid/registration.js';
import type { App, AppContext } from '../context.js';
import { notFound, unknownNetwork, validationError } from '../errors.js';
import { CACHE_AGGREGATE } from '../free-cache.js';
import { AgentRegistrationSchema } from '../schemas/registrations.js';
import {
  NETWORK_DOC,
  NotFoundSchema,
  UnknownNetworkSchema,
  ValidationErrorSchema,
  json,
} from '../schemas/common.js';

const registrationRoute = createRoute({
  method: 'get',
  path: '/agents/{network}/{agent_id}/registration',
  summary: "One agent's registration file: what it declares, its domain proofs and live endpoints (free)",
  description:
    "The agent's registration file (its agentURI) as the agent declares it: self-declared, never a verification; every " +
    'string in it is untrusted text (escape it, never render it as markup). Beside it, per service, what this index ' +
    'observed: the domain proof (https://{host}/.well-known/agent-registration.json) and the liveness at the protocol ' +
    'level. Evidence only: it moves no score. Fresh within a minute (the fetcher and the probes run between index ' +
    'passes). The same id on another chain is a different agent.',
  tags: ['free'],
  request: {
    params: z.object({
      network: z.string().openapi({ description: NETWORK_DOC, example: 'base' }),
      agent_id: z.string().openapi({
        description: 'A decimal counter on EVM chains, a base58 key on solana; always a string.',
        example: '1',
      }),
    }),
  },
  responses: {
    200: json(AgentRegistrationSchema, 'The registration'),
    404: json(
      z.union([UnknownNetworkSchema, NotFoundSchema]),
      '`unknown_network` (with `known_networks`), or `agent not indexed`',
    ),
    422: json(ValidationErrorSchema, '`agent_id` is not of the shape of that chain'),
  },
});

export function registerAgentRoutes(app: App, ctx: AppContext): void {
  app.openapi(registrationRoute, async function getAgentRegistration(c) {
    const { network: rawNetwork, agent_id: rawId } = c.req.valid('param');
    const network = resolveNetwork(ctx, rawNetwork);
    if (network === null) return unknownNetwork(c, ctx, rawNetwork, 404);
    const agentId = normalizeAgentId(network, rawId);
    if (agentId === null) {
      return validationError(c, [
        {
          loc: ['path', 'agent_id'],
          msg:
            network === 'solana'
              ? 'agent_id on solana is a base58 asset address (32-44 chars, case-sensitive).'
              : 'agent_id on an EVM chain is the registry counter in decimal digits.',
          type: 'value_error',
          input: rawId,
        },
      ]) as never;
    }
    const db = readerOf(ctx.db);
    const [indexed, head, registration] = await Promise.all([
      agentIsIndexed(db, network, agentId),
      readAgentHead(db, network, agentId),
      readAgentRegistration(db, network, agentId),
    ]);
    if (!indexed) return notFound(c, 'agent not indexed') as never;
    c.header('Cache-Control', CACHE_AGGREGATE);
    return c.json(
      {
        network,
        agent_id: agentId,
        owner: head?.owner ?? null,
        agent_uri: head?.agent_uri ?? null,
        registration: servedRegistration(registration),
        detail_route: `GET /reputation/agent/${network}/${agentId}`,
      },
      200,
    );
  });
}
