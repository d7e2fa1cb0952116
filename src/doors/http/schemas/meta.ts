/** Response schemas of the static documents: /pricing, /manifesto, /workflows.json, /.well-known/*, the refusals. */
import { z } from '@hono/zod-openapi';
import { PRINCIPLE_IDS } from '../../../manifesto.js';

const PaymentNetworkSchema = z
  .object({
    network: z.string(),
    chain_id: z.number().int(),
    caip2: z.string().openapi({ description: 'As `accepts[].network` carries it, e.g. `eip155:8453`.' }),
    asset: z.string().openapi({
      description: "The USDC contract on that network. Sign against the 402's `accepts[].asset`.",
    }),
    asset_name: z.string().openapi({ description: 'EIP-712 domain name of the token.' }),
    asset_version: z.string().openapi({ description: 'EIP-712 domain version of the token.' }),
    decimals: z.number().int(),
  })
  .openapi('PaymentNetwork');

const PricingTierSchema = z
  .object({
    id: z.string().openapi({ description: 'Stable tier id; travels in every 402 as `pricing.tier`.' }),
    method: z
      .enum(['GET', 'POST', 'ANY'])
      .openapi({ description: '`GET` also covers `HEAD`; `ANY` is every method.' }),
    path: z.string().openapi({
      description:
        'Anchored regular expression over the request path (the `/v1` alias stripped): the very pattern the paywall matches.',
    }),
    price_usd: z
      .string()
      .openapi({ description: 'USD as a decimal STRING, never a float. `"0"` on free tiers.' }),
    amount: z
      .string()
      .openapi({ description: 'The same price in USDC base units (6 decimals): `"10000"` is $0.01.' }),
    free: z.boolean(),
    conditional: z.boolean().openapi({
      description:
        'True when the price of that path depends on the query string; the authority for one call is its own 402.',
    }),
    when_query: z.record(z.string(), z.string()).nullable().openapi({
      description:
        'Query parameters that select this tier over its unconditional sibling (e.g. `{"snapshot":"true"}`).',
    }),
    why: z
      .string()
      .openapi({ description: 'The cost reason behind the price, in one sentence; also in every 402.' }),
    free_preview: z.object({ endpoint: z.string(), gives: z.string() }).nullable().openapi({
      description:
        'Metered tiers: the free route answering the same question (null on the rater route, on purpose).',
    }),
  })
  .openapi('PricingTier');

export const PricingCatalogSchema = z
  .object({
    pricing_version: z
      .string()
      .openapi({ description: 'Version of the whole table; also the `X-Pricing-Version` header.' }),
    currency: z.string(),
    networks: z
      .array(z.string())
      .openapi({ description: 'Networks accepted for payment, in the order every challenge offers them.' }),
    accepted_networks: z.array(PaymentNetworkSchema),
    treasury: z.string().nullable().openapi({
      description:
        'The single pinned `payTo`. If a challenge names another address, do not pay. Null while unset (metered routes then answer 503).',
    }),
    max_timeout_seconds: z.number().int(),
    free_tier: z.string(),
    authority: z.string(),
    tiers: z.array(PricingTierSchema),
  })
  .openapi('PricingCatalog');

export const ManifestoSchema = z
  .object({
    manifesto_version: z.string(),
    title: z.string(),
    subtitle: z.string(),
    catchphrase: z.string(),
    editions: z.object({ en: z.string(), es: z.string(), html: z.string() }).openapi({
      description: 'The prose in full: English and Spanish Markdown, and HTML.',
    }),
    note: z.string(),
    origin: z.record(z.string(), z.unknown()).openapi({
      description:
        'Where the principles come from: earlier reputation products, their lessons and what this index corrects. No figures.',
    }),
    principles: z.array(
      z
        .object({
          id: z.enum(PRINCIPLE_IDS),
          statement: z.string(),
          detail: z.string(),
          inherited_from: z.string().nullable(),
          enforced_by: z
            .string()
            .openapi({ description: 'The file or route that makes the principle true.' }),
        })
        .openapi('ManifestoPrinciple'),
    ),
    we_are_not: z.array(z.string()),
    verifications: z.array(
      z
        .object({
          claim: z.string(),
          route: z.string(),
          free: z.boolean(),
          command: z
            .string()
            .openapi({ description: 'A curl against this deployment that checks the claim.' }),
          read: z.string().openapi({ description: 'What to read in the answer.' }),
        })
        .openapi('ManifestoVerification'),
    ),
    siblings: z.record(z.string(), z.string()),
  })
  .openapi('Manifesto');

const WorkflowStepSchema = z
  .object({
    step: z.number().int(),
    method: z.string(),
    route: z
      .string()
      .openapi({ description: 'Route template; replace `{wallet}`, `{q}`, `{network}`, `{agent_id}`.' }),
    free: z.boolean(),
    price_usd: z.string().openapi({ description: 'From the pricing table (`"0"` when free).' }),
    tier: z.string().nullable(),
    gives: z.string(),
    next: z.string().openapi({ description: 'How to read the answer and what to do next.' }),
  })
  .openapi('WorkflowStep');

export const WorkflowsSchema = z
  .object({
    workflows_version: z.string(),
    description: z.string(),
    base_url: z.string(),
    pricing_version: z.string(),
    workflows: z.array(
      z
        .object({
          id: z.string(),
          goal: z.string(),
          when: z.string(),
          steps: z.array(WorkflowStepSchema),
        })
        .openapi('Workflow'),
    ),
  })
  .openapi('Workflows');

export const ProtectedResourceSchema = z
  .object({
    resource: z.string(),
    resource_name: z.string(),
    resource_documentation: z.string(),
    authorization_servers: z
      .array(z.string())
      .openapi({ description: 'Always empty: there is no authorization server.' }),
    scopes_supported: z.array(z.string()).openapi({ description: 'Always empty.' }),
    bearer_methods_supported: z
      .array(z.string())
      .openapi({ description: 'Always empty: no bearer token is ever useful.' }),
    x402: z.object({ protocol: z.literal('x402+HTTP'), pricing: z.string(), documentation: z.string() }),
  })
  .openapi('ProtectedResourceMetadata');

export const RefusalSchema = z
  .object({
    detail: z.object({
      error: z.enum(['not_offered', 'no_accounts']),
      message: z.string(),
      principle: z.enum(['not-a-people-search-engine', 'payment-is-the-authentication']),
      manifesto: z.string().openapi({ description: 'Where the principle is published.' }),
    }),
  })
  .openapi('Refusal');
