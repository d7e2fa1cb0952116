/**
 * Schemas of the registration files, domain proofs and liveness: the `registration` object (the
 * free `GET /agents/{network}/{agent_id}/registration`, and the paid agent detail) and the coverage
 * funnel of `GET /stats/registrations`.
 */
import { z } from '@hono/zod-openapi';

const ServiceSchema = z
  .object({
    type: z.string().openapi({
      description: 'The service name as declared (A2A, MCP, web, OASF, ENS, DID, …). Untrusted text.',
    }),
    url: z.string().openapi({
      description: 'The endpoint as declared. Untrusted text: escape it; never follow it blindly.',
    }),
    version: z.string().nullable(),
    domain_proof: z
      .enum(['verified', 'absent', 'mismatch', 'unreachable'])
      .nullable()
      .openapi({
        description:
          'For an https endpoint: whether https://{host}/.well-known/agent-registration.json lists this agent (`verified`), lists ' +
          'others or nothing readable (`mismatch`), is not served (`absent`), or the host could not be asked (`unreachable`). ' +
          'null: not an https endpoint, or not checked (`domain_reason: not_checked`).',
      }),
    domain_reason: z.string().nullable(),
    domain_checked_at: z.string().nullable(),
    liveness: z.object({
      state: z.enum(['alive', 'dead', 'pending', 'not_probed']).openapi({
        description:
          'At the protocol level, as last probed: an A2A card that parses, an MCP server answering initialize and ' +
          'tools/list, a web endpoint answering 2xx (a 404 is dead). `pending`: not probed yet; `not_probed`: no http(s) URL.',
      }),
      probe: z.enum(['a2a', 'mcp', 'web', 'none']),
      reason: z
        .string()
        .nullable()
        .openapi({ description: 'Why the last probe failed (e.g. timeout, http_404, blocked_address).' }),
      last_checked_at: z.string().nullable(),
      last_alive_at: z.string().nullable().openapi({ description: 'The last successful probe.' }),
      tool_count: z
        .number()
        .int()
        .nullable()
        .openapi({ description: 'MCP tools listed at the last successful probe.' }),
      skill_count: z
        .number()
        .int()
        .nullable()
        .openapi({ description: 'A2A card skills at the last successful probe.' }),
      latency_ms: z.number().int().nullable(),
    }),
  })
  .openapi('RegistrationService');

export const RegistrationSchema = z
  .object({
    state: z.enum(['pending', 'valid', 'invalid', 'unreachable', 'changed']).openapi({
      description:
        '`pending`: not fetched yet. `valid`: it reads and passes registration-v1 (leniently). `invalid`: no JSON object, ' +
        'or fields that fail (`problems`; a `registrations[]` that does not name this agent included). `unreachable`: no ' +
        'answer after the retries (what an earlier fetch read is still shown). `changed`: valid, but other bytes than the ' +
        'first fetched for this URI (edited without an on-chain URIUpdated).',
    }),
    uri: z.string(),
    declared: z
      .string()
      .openapi({ description: 'Says which fields are declared by the agent (never verified).' }),
    name: z.string().nullable().openapi({
      description: 'Declared by the agent. Untrusted text: escape it, never render it as markup.',
    }),
    description: z.string().nullable().openapi({ description: 'Declared by the agent. Untrusted text.' }),
    image: z
      .string()
      .nullable()
      .openapi({ description: 'Declared by the agent (a URL or data: URI as written; never fetched).' }),
    services: z.array(ServiceSchema),
    x402_support: z.boolean().nullable(),
    active: z.boolean().nullable(),
    supported_trust: z.array(z.string()),
    registrations_check: z
      .enum(['listed', 'absent', 'mismatch'])
      .nullable()
      .openapi({ description: "The file's registrations[] against this agent's own registry and id." }),
    problems: z.array(z.object({ field: z.string(), problem: z.string() })),
    fetch: z.object({
      state: z.string(),
      attempts: z.number().int(),
      last_error_code: z.string().nullable(),
      blob_sha256: z.string().nullable(),
      byte_length: z.number().int().nullable(),
      parser_version: z.string().nullable(),
    }),
    fetched_at: z.string().nullable().openapi({ description: 'The last fetch that returned bytes.' }),
    checked_at: z.string().nullable(),
    changed_at: z.string().nullable(),
  })
  .openapi('Registration');

export const AgentRegistrationSchema = z
  .object({
    network: z.string(),
    agent_id: z.string(),
    owner: z
      .string()
      .nullable()
      .openapi({ description: "The agent's current owner (ERC-721), null when not known yet." }),
    agent_uri: z.string().nullable(),
    registration: RegistrationSchema.nullable().openapi({
      description: 'null: the agent names no agentURI.',
    }),
    detail_route: z.string().openapi({ description: 'The paid route with every rating of this agent.' }),
  })
  .openapi('AgentRegistration');

const CoverageSchema = z.object({
  agents: z.number().int().openapi({ description: 'Agents indexed.' }),
  with_uri: z.number().int().openapi({ description: 'Agents naming an agentURI.' }),
  fetched: z
    .number()
    .int()
    .openapi({ description: 'Agents whose URI answered (a file, or something that is no file).' }),
  valid_file: z.number().int().openapi({ description: 'Agents whose file is valid (`valid` or `changed`).' }),
  verified_domain: z.number().int().openapi({
    description: 'Agents with a valid file and at least one service whose domain proof is verified.',
  }),
  live_endpoint: z
    .number()
    .int()
    .openapi({ description: 'Agents with a valid file and at least one service alive at its last probe.' }),
  file_states: z.object({
    pending: z.number().int(),
    valid: z.number().int(),
    invalid: z.number().int(),
    unreachable: z.number().int(),
    changed: z.number().int(),
  }),
  domain_proofs: z
    .object({
      verified: z.number().int(),
      absent: z.number().int(),
      mismatch: z.number().int(),
      unreachable: z.number().int(),
    })
    .openapi({ description: 'Per service endpoint.' }),
  endpoints: z.object({
    total: z.number().int(),
    probed: z.number().int(),
    alive: z.number().int(),
    dead: z.number().int(),
  }),
});

export const RegistrationStatsSchema = z
  .object({
    advisory: z.literal(true),
    funnel: z.array(z.string()).openapi({ description: 'The funnel fields, in order.' }),
    note: z.string(),
    chains: z.array(CoverageSchema.extend({ network: z.string() })),
    totals: CoverageSchema,
    fetcher_enabled: z.boolean(),
    liveness_enabled: z.boolean(),
  })
  .openapi('RegistrationStats');
