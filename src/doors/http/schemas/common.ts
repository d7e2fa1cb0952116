/** The zod pieces every route family shares: response helper, query integers, error bodies, path parameters. */
import { z } from '@hono/zod-openapi';

export const json = <T extends z.ZodType>(schema: T, description: string) => ({
  description,
  content: { 'application/json': { schema } },
});

/** A query integer in [min, max]: digits only ("1.5", "1e2", "" and "abc" are 422). */
export function intQuery(bounds: { default: number; min: number; max: number }, description: string) {
  return z
    .preprocess(
      (v) => (typeof v === 'string' && /^\d{1,9}$/.test(v) ? Number(v) : v),
      z
        .number({ error: 'Input should be a valid integer' })
        .int('Input should be a valid integer')
        .min(bounds.min, `Input should be greater than or equal to ${bounds.min}`)
        .max(bounds.max, `Input should be less than or equal to ${bounds.max}`),
    )
    .default(bounds.default)
    .openapi({
      description: `${description} Integer ${bounds.min}..${bounds.max}, default ${bounds.default}.`,
    });
}

export const NETWORK_DOC =
  'Chain slug, case-insensitive. The vocabulary is `chains[].network` of `GET /chains` (or `GET /health`).';

export const UnknownNetworkSchema = z
  .object({
    detail: z.object({
      error: z.literal('unknown_network'),
      network: z.string().openapi({ description: 'The slug as you sent it.' }),
      known_networks: z.array(z.string()).openapi({ description: 'Every network this index holds.' }),
      message: z.string(),
    }),
  })
  .openapi('UnknownNetwork');

export const ValidationErrorSchema = z
  .object({
    detail: z.array(
      z.object({ loc: z.array(z.union([z.string(), z.number()])), msg: z.string(), type: z.string() }),
    ),
  })
  .openapi('HTTPValidationError');

export const CaveatSchema = z
  .object({
    code: z.string().openapi({
      description:
        'One of the eight frozen codes (`no-score`, `concentration-degraded`, `single-rater`, `few-raters`, `top-client-share`, `campaign-per-rater`, `self-rated`, `burn-address`). Branch on this, never on `text`.',
    }),
    text: z
      .string()
      .openapi({ description: 'Human sentence (Spanish today); may be reworded or translated.' }),
  })
  .openapi('Caveat');

export const NotAnAddressSchema = z
  .object({
    detail: z.object({
      error: z.string().openapi({ description: 'Always `not_an_address` here.', example: 'not_an_address' }),
      wallet: z.string().openapi({ description: 'The path segment as you sent it.' }),
      message: z.string(),
    }),
  })
  .openapi('NotAnAddress');

export const walletParam = z.string().openapi({
  param: { name: 'wallet', in: 'path' },
  description:
    'EVM address (`0x` + 40 hex, any case; 40 hex without `0x` is accepted too) or a Solana base58 key (32-44 chars, case-SENSITIVE: send it verbatim). Anything else answers 422 `not_an_address`.',
  examples: ['0x000000000000000000000000000000000000dEaD', '1nc1nerator11111111111111111111111111111111'],
});

export const NotFoundSchema = z.object({ detail: z.string() }).openapi('NotFound');

/**
 * The `503` of a metered route: every one says whether retrying helps, and the retryable ones
 * after how long (`Retry-After` too). `X-Payment-Receipt` set means the payment WAS settled.
 */
export const PaidUnavailableSchema = z
  .object({
    error: z.enum([
      'facilitator_unavailable',
      'paid_capacity_exhausted',
      'database_unavailable',
      'payment_spent_pending',
      'payments_not_configured',
    ]),
    message: z.string(),
    retryable: z.boolean(),
    retry_after_seconds: z.number().int().optional(),
  })
  .openapi('PaidUnavailable');
