/**
 * The manifesto, as static data (`GET /manifesto`) and its editions (`/manifesto.md` in English,
 * `/manifesto.es.md` in Spanish, `/manifesto.html`). It never touches the index: no figure of the
 * index is copied into it (the routes named in `verifications` serve them live), so it cannot go
 * stale against a number and keeps answering with the database down.
 */
import { escapeHtml } from './html-escape.js';

const MANIFESTO_VERSION = 'manifesto@1';

export const PRINCIPLE_IDS = [
  'score-with-composition',
  'no-data-is-not-zero',
  'self-assessment-published-never-averaged',
  'not-an-oracle',
  'not-a-bridge',
  'not-a-people-search-engine',
  'payment-is-the-authentication',
  'every-claim-carries-its-transaction',
] as const;
type PrincipleId = (typeof PRINCIPLE_IDS)[number];

interface Text {
  en: string;
  es: string;
}

interface PrincipleSource {
  id: PrincipleId;
  statement: Text;
  detail: Text;
  inherited_from: string | null;
  enforced_by: string;
}

export interface ManifestoPrinciple {
  id: PrincipleId;
  statement: string;
  detail: string;
  inherited_from: string | null;
  enforced_by: string;
}

export interface ManifestoVerification {
  claim: string;
  route: string;
  free: boolean;
  command: string;
  read: string;
}

export interface Manifesto {
  manifesto_version: string;
  title: string;
  subtitle: string;
  catchphrase: string;
  editions: { en: string; es: string; html: string };
  note: string;
  origin: {
    kind: string;
    summary: string;
    lessons: { id: string; lesson: string }[];
    corrected: string[];
    figures: null;
    figures_note: string;
  };
  principles: ManifestoPrinciple[];
  we_are_not: string[];
  verifications: ManifestoVerification[];
  siblings: Record<string, string>;
}

const TITLE: Text = { en: 'Evidence, not verdicts', es: 'Evidencia, no veredictos' };
const SUBTITLE: Text = {
  en: 'A read-only index of ERC-8004 agent reputation that serves every score together with who made it.',
  es: 'Un índice de solo lectura de la reputación de agentes ERC-8004 que sirve cada puntuación junto con quién la hizo.',
};
const CATCHPHRASE: Text = {
  en: 'The number is free; who it is made of is the product.',
  es: 'El número es gratis; de quién está hecho es el producto.',
};
const NOTE: Text = {
  en: 'No figure of the index is copied into this document: the routes listed under verifications serve them live, and a number frozen inside a manifesto goes stale while still sounding exact. This document is static and never touches the database.',
  es: 'Ninguna cifra del índice está copiada en este documento: las rutas de las verificaciones las sirven en vivo, y un número congelado dentro de un manifiesto envejece sin dejar de sonar exacto. Este documento es estático y nunca toca la base de datos.',
};

const ORIGIN = {
  kind: 'prior-product',
  summary:
    'These principles come from earlier reputation products, in particular the people-rating services of the previous web generation: sites where anybody could rate anybody and a single headline number stood for a person. This index inherits their lessons, not their data, and corrects what they got wrong.',
  lessons: [
    {
      id: 'who-said-it',
      lesson:
        'A rating is only worth as much as the list of who gave it; a mean without its raters cannot be audited.',
    },
    {
      id: 'silence-is-not-a-grade',
      lesson: 'Showing an unrated subject as a low score punished the people nobody had rated yet.',
    },
    { id: 'self-praise', lesson: 'Subjects rating themselves inflated every average that let them in.' },
    {
      id: 'receipts',
      lesson: 'Reputation that could not be traced back to its source was impossible to contest.',
    },
  ],
  corrected: [
    'They rated persons; this index describes on-chain agents and wallets only and offers no name search and no person lookup.',
    'They had accounts, sign-in and profiles; here there is no account at all and payment is the authentication.',
    'They showed one number; here the composition travels with every score.',
  ],
  figures: null,
  figures_note:
    'No counts or dates of those products are reproduced here: this service cannot verify them, and a manifesto should only state what can be checked.',
};

const PRINCIPLES: readonly PrincipleSource[] = [
  {
    id: 'score-with-composition',
    statement: {
      en: 'Every score travels with its composition.',
      es: 'Cada puntuación viaja con su composición.',
    },
    detail: {
      en: 'A score is served next to its distinct raters, its volume, its concentration, its self-rating gap and its per-facet and per-chain detail, together with the policy_version that produced it. The number alone is never the answer.',
      es: 'Una puntuación se sirve junto a sus calificadores distintos, su volumen, su concentración, su brecha de autocalificación y su detalle por faceta y por cadena, con la policy_version que la produjo. El número solo nunca es la respuesta.',
    },
    inherited_from: 'origin.lessons.who-said-it',
    enforced_by:
      'src/scoring/score.ts and src/scoring/concentration.ts; GET /wallets/{wallet}/chains (total_reviews and distinct_raters on every row); GET /reputation/wallet/{wallet} (per_chain, facets, self_rated, concentration)',
  },
  {
    id: 'no-data-is-not-zero',
    statement: { en: 'No data is not zero.', es: 'Sin datos no es cero.' },
    detail: {
      en: 'When nothing is eligible the score is null, never a zero, and the caveat no-score says so. A real zero rating is served as zero. A wallet that holds nothing is an answer with empty lists, not an error.',
      es: 'Cuando nada es elegible la puntuación es null, nunca cero, y la advertencia no-score lo dice. Una calificación real de cero se sirve como cero. Una wallet sin nada es una respuesta con listas vacías, no un error.',
    },
    inherited_from: 'origin.lessons.silence-is-not-a-grade',
    enforced_by:
      'src/scoring/score.ts (null when nothing is eligible); src/scoring/caveats.ts (no-score); GET /wallets/{wallet}/chains',
  },
  {
    id: 'self-assessment-published-never-averaged',
    statement: {
      en: 'Self-assessment is published, never averaged in.',
      es: 'La autoevaluación se publica, nunca se promedia.',
    },
    detail: {
      en: 'A rating whose rater is the subject wallet is excluded from every score and published apart in self_rated, with gap = self minus others. The index publishes the gap and does not judge it.',
      es: 'Una calificación cuyo autor es la propia wallet evaluada queda fuera de toda puntuación y se publica aparte en self_rated, con gap = propia menos ajenas. El índice publica la brecha y no la juzga.',
    },
    inherited_from: 'origin.lessons.self-praise',
    enforced_by:
      'src/scoring/classify.ts (self class); src/scoring/score.ts (selfRated); src/db/sql-fragments.ts (ELIGIBLE)',
  },
  {
    id: 'not-an-oracle',
    statement: {
      en: 'Not an oracle: evidence, not a verdict.',
      es: 'No es un oráculo: evidencia, no veredicto.',
    },
    detail: {
      en: 'The index predicts nothing and approves nothing. It reports who rated a subject, how many of them, on what and when; caveats are advisory and never move a score. It serves no prices other than its own. The decision stays with the client.',
      es: 'El índice no predice ni aprueba nada. Informa quién calificó a un sujeto, cuántos, sobre qué y cuándo; las advertencias son orientativas y nunca mueven una puntuación. No sirve más precios que los propios. La decisión es del cliente.',
    },
    inherited_from: null,
    enforced_by:
      'src/scoring/caveats.ts (advisory, independent rules); GET /health (reading_policy.self_gap is null)',
  },
  {
    id: 'not-a-bridge',
    statement: {
      en: 'Not a bridge: each chain speaks for itself.',
      es: 'No es un puente: cada cadena habla por sí misma.',
    },
    detail: {
      en: "A per-chain score is computed from that chain's ratings only, and a wallet's global score is the mean of its chain scores with one vote per chain, always shipped with the per-chain detail. The same numeric agent id is a different agent on every chain. The index moves nothing between chains and writes to none.",
      es: 'La puntuación de una cadena se calcula solo con las calificaciones de esa cadena, y la puntuación global de una wallet es la media de sus puntuaciones por cadena, un voto por cadena, siempre con el detalle por cadena. El mismo id numérico es un agente distinto en cada cadena. El índice no mueve nada entre cadenas y no escribe en ninguna.',
    },
    inherited_from: null,
    enforced_by:
      'src/scoring/score.ts (equal weight per chain); GET /search/{q} (one row per chain, each with its owner)',
  },
  {
    id: 'not-a-people-search-engine',
    statement: {
      en: 'Not a people search engine.',
      es: 'No es un buscador de personas.',
    },
    detail: {
      en: 'There is no name search and no person lookup: lookups are exact matches on an address or an agent id, with no prefix, wildcard or listing. The name routes answer with a documented refusal, and no amount of on-chain behaviour makes the index call a subject a person.',
      es: 'No hay búsqueda por nombre ni búsqueda de personas: las consultas son coincidencias exactas sobre una dirección o un id de agente, sin prefijos, comodines ni listados. Las rutas de nombres responden con una negativa documentada, y ningún comportamiento en cadena hace que el índice llame persona a un sujeto.',
    },
    inherited_from: 'origin.corrected',
    enforced_by:
      'src/doors/http/routes/refusals.ts (/names/resolve and /names/reverse answer 410 not_offered); src/doors/http/routes/search.ts (exact match only)',
  },
  {
    id: 'payment-is-the-authentication',
    statement: {
      en: 'Payment is the authentication.',
      es: 'El pago es la autenticación.',
    },
    detail: {
      en: 'There is no account, registration, API key, OAuth or token. Free routes answer anybody; a metered route answers a price quote until it is paid per call in USDC over x402, to the one pinned treasury address published in the pricing table.',
      es: 'No hay cuenta, registro, clave de API, OAuth ni token. Las rutas gratuitas responden a cualquiera; una ruta medida responde con una cotización hasta que se paga por llamada en USDC sobre x402, a la única dirección de tesorería publicada en la tabla de precios.',
    },
    inherited_from: 'origin.corrected',
    enforced_by:
      'src/payments/pricing.ts (the one table the paywall charges from); GET /.well-known/oauth-protected-resource (authorization_servers is empty); /auth and /me answer 410 no_accounts',
  },
  {
    id: 'every-claim-carries-its-transaction',
    statement: {
      en: 'Every claim carries its transaction.',
      es: 'Cada afirmación lleva su transacción.',
    },
    detail: {
      en: 'Each rating is stored and served with its transaction hash, block and log index; revoked ratings stay published, marked, with the transaction that revoked them. Anybody can check a rating against the chain instead of trusting the index.',
      es: 'Cada calificación se guarda y se sirve con su hash de transacción, bloque e índice de log; las revocadas siguen publicadas, marcadas, con la transacción que las revocó. Cualquiera puede comprobar una calificación contra la cadena en vez de confiar en el índice.',
    },
    inherited_from: 'origin.lessons.receipts',
    enforced_by:
      'src/db/migrations/0001_core.sql (ratings keyed by network, tx_hash, log_index); GET /feed; GET /reputation/agent/{network}/{agent_id}',
  },
];

const WE_ARE_NOT: readonly Text[] = [
  { en: 'a block explorer', es: 'un explorador de bloques' },
  { en: 'a price oracle', es: 'un oráculo de precios' },
  { en: 'a credit score', es: 'una calificación crediticia' },
  { en: 'an identity service', es: 'un servicio de identidad' },
  { en: 'a people search engine', es: 'un buscador de personas' },
  { en: 'a bridge', es: 'un puente' },
  { en: 'a writer to any chain', es: 'algo que escriba en una cadena' },
];

/** Example subjects of the verification commands (well-known, published addresses). */
const EXAMPLE_BURN = '0x000000000000000000000000000000000000dEaD';

function verifications(base: string): ManifestoVerification[] {
  return [
    {
      claim: 'Every score travels with its composition.',
      route: 'GET /wallets/{wallet}/chains',
      free: true,
      command: `curl -s ${base}/wallets/${EXAMPLE_BURN}/chains`,
      read: 'Every chains[] row carries total_reviews and distinct_raters next to final_score; policy_version names the policy.',
    },
    {
      claim: 'No data is not zero.',
      route: 'GET /wallets/{wallet}/chains',
      free: true,
      command: `curl -s ${base}/wallets/0x0000000000000000000000000000000000000001/chains`,
      read: 'A wallet that holds no identity answers chains: [] and global_score: null, never a zero; an identity nobody rated shows final_score: null.',
    },
    {
      claim: 'Caveats are data, not prose.',
      route: 'GET /wallets/{wallet}/chains',
      free: true,
      command: `curl -s ${base}/wallets/${EXAMPLE_BURN}/chains`,
      read: 'caveats[] carries the code burn-address for a known burn address; caveats_not_computed lists what only the paid decomposition evaluates.',
    },
    {
      claim: 'Self-assessment is published, never averaged in.',
      route: 'GET /reputation/wallet/{wallet}',
      free: false,
      command: `curl -si ${base}/reputation/wallet/${EXAMPLE_BURN}`,
      read: 'Unpaid, the answer is the price quote (HTTP 402). Paid, self_rated {count, score, gap} sits beside final_score, which excludes it.',
    },
    {
      claim: 'Each chain speaks for itself.',
      route: 'GET /search/{q}',
      free: true,
      command: `curl -s ${base}/search/1`,
      read: 'An agent id answers one row per chain, each with its own owner and score: the same number is a different agent on every chain.',
    },
    {
      claim: 'Every rating carries its transaction.',
      route: 'GET /feed',
      free: true,
      command: `curl -s "${base}/feed?limit=5"`,
      read: 'Every row carries tx_hash and block_time; look the transaction up in any explorer of that chain.',
    },
    {
      claim: 'There is no name search and no person lookup.',
      route: 'GET /names/resolve',
      free: true,
      command: `curl -si "${base}/names/resolve?name=example.eth"`,
      read: 'HTTP 410 with detail.error not_offered and the principle that refuses it; no data about anybody.',
    },
    {
      claim: 'Payment is the authentication.',
      route: 'GET /.well-known/oauth-protected-resource',
      free: true,
      command: `curl -s ${base}/.well-known/oauth-protected-resource`,
      read: 'authorization_servers, scopes_supported and bearer_methods_supported are empty; x402 points at the pricing table.',
    },
    {
      claim: 'Every price carries its reason, and the policies are published.',
      route: 'GET /pricing',
      free: true,
      command: `curl -s ${base}/pricing`,
      read: 'Each tier has price_usd as a string, its amount in USDC base units and a why; the treasury is the only address to pay. GET /health publishes the policies in force.',
    },
  ];
}

function siblings(base: string): Record<string, string> {
  return {
    openapi: `${base}/openapi.json`,
    docs: `${base}/docs`,
    redoc: `${base}/redoc`,
    pricing: `${base}/pricing`,
    health: `${base}/health`,
    workflows: `${base}/workflows.json`,
    agent_card: `${base}/.well-known/agent-card.json`,
    protected_resource: `${base}/.well-known/oauth-protected-resource`,
  };
}

function manifestoEditions(base: string): Manifesto['editions'] {
  return { en: `${base}/manifesto.md`, es: `${base}/manifesto.es.md`, html: `${base}/manifesto.html` };
}

/** The manifesto record of `GET /manifesto` (English; the Spanish edition is a sibling document). */
export function manifesto(baseUrl: string): Manifesto {
  const base = baseUrl.replace(/\/+$/, '');
  return {
    manifesto_version: MANIFESTO_VERSION,
    title: TITLE.en,
    subtitle: SUBTITLE.en,
    catchphrase: CATCHPHRASE.en,
    editions: manifestoEditions(base),
    note: NOTE.en,
    origin: {
      ...ORIGIN,
      lessons: ORIGIN.lessons.map((l) => ({ ...l })),
      corrected: [...ORIGIN.corrected],
    },
    principles: PRINCIPLES.map((p) => ({
      id: p.id,
      statement: p.statement.en,
      detail: p.detail.en,
      inherited_from: p.inherited_from,
      enforced_by: p.enforced_by,
    })),
    we_are_not: WE_ARE_NOT.map((w) => w.en),
    verifications: verifications(base),
    siblings: siblings(base),
  };
}

/** Markdown edition in English or Spanish, from the same data. */
export function manifestoMarkdown(baseUrl: string, lang: 'en' | 'es'): string {
  const base = baseUrl.replace(/\/+$/, '');
  const L = (t: Text) => t[lang];
  const h =
    lang === 'en'
      ? {
          principles: 'Principles',
          not: 'What we are not',
          verify: 'Verify it yourself',
          enforced: 'Enforced by',
          free: 'free',
          paid: 'paid',
        }
      : {
          principles: 'Principios',
          not: 'Lo que no somos',
          verify: 'Compruébalo tú mismo',
          enforced: 'Lo hace cumplir',
          free: 'gratis',
          paid: 'de pago',
        };
  const out: string[] = [];
  out.push(`# ${L(TITLE)}`, '', `*${L(SUBTITLE)}*`, '', `> ${L(CATCHPHRASE)}`, '', L(NOTE), '');
  out.push(`## ${h.principles}`, '');
  for (const p of PRINCIPLES) {
    out.push(
      `### ${L(p.statement)} (\`${p.id}\`)`,
      '',
      L(p.detail),
      '',
      `${h.enforced}: ${p.enforced_by}`,
      '',
    );
  }
  out.push(`## ${h.not}`, '');
  for (const w of WE_ARE_NOT) out.push(`- ${L(w)}`);
  out.push('', `## ${h.verify}`, '');
  for (const v of verifications(base)) {
    out.push(
      `- **${v.claim}** (${v.route}, ${v.free ? h.free : h.paid})`,
      '',
      '  ```',
      `  ${v.command}`,
      '  ```',
      '',
      `  ${v.read}`,
      '',
    );
  }
  out.push(`${MANIFESTO_VERSION} · ${base}/manifesto`, '');
  return out.join('\n');
}

/** Escapes text for HTML element content and attribute values. */

/** HTML edition (English): plain, no script, every interpolated string escaped. */
export function manifestoHtml(baseUrl: string): string {
  const m = manifesto(baseUrl);
  const e = escapeHtml;
  const parts: string[] = [];
  parts.push(
    '<!doctype html>',
    '<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${e(m.title)}</title>`,
    '<style>body{font-family:system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;line-height:1.5;color:#222}code,pre{background:#f3f3f6;padding:.1rem .3rem;border-radius:3px}pre{padding:.5rem;overflow-x:auto}h3 code{font-size:.8em;color:#555}</style>',
    '</head><body>',
    `<h1>${e(m.title)}</h1><p><em>${e(m.subtitle)}</em></p><blockquote>${e(m.catchphrase)}</blockquote><p>${e(m.note)}</p>`,
    '<h2>Principles</h2>',
  );
  for (const p of m.principles) {
    parts.push(
      `<h3 id="${e(p.id)}">${e(p.statement)} <code>${e(p.id)}</code></h3><p>${e(p.detail)}</p><p><small>Enforced by: ${e(p.enforced_by)}</small></p>`,
    );
  }
  parts.push('<h2>What we are not</h2><ul>', ...m.we_are_not.map((w) => `<li>${e(w)}</li>`), '</ul>');
  parts.push('<h2>Verify it yourself</h2>');
  for (const v of m.verifications) {
    parts.push(
      `<p><strong>${e(v.claim)}</strong> (${e(v.route)}, ${v.free ? 'free' : 'paid'})</p><pre>${e(v.command)}</pre><p>${e(v.read)}</p>`,
    );
  }
  parts.push(
    `<p><a href="${e(m.editions.en)}">English (Markdown)</a> · <a href="${e(m.editions.es)}">Español (Markdown)</a> · <a href="${e(m.siblings.docs ?? '')}">API documentation</a></p>`,
    '</body></html>',
  );
  return parts.join('\n');
}
