/**
 * An agent's registration file (its agentURI) read against ERC-8004 `registration-v1`, leniently,
 * as pure functions of the bytes (no I/O): the older shapes still circulate and are accepted
 * (`endpoints[]` for `services[]`, lowercase `x402support`, a service's `url` for `endpoint`, an
 * agentId written as a string), unknown fields are ignored, over-long strings are cut; what fails
 * is named (`problems`: the field and what is wrong with it) and makes the file `invalid`.
 *
 * Everything in the file is hostile text: strings are kept as text (control characters and lone
 * surrogates replaced, lengths capped) and never interpreted; the JSON is refused before parsing
 * when it nests deeper than a registration file ever needs, and nothing here walks a value
 * recursively.
 */

export const REGISTRATION_TYPE = 'https://eips.ethereum.org/EIPS/eip-8004#registration-v1';
/** Stored with each parsed file: moves when these rules change. */
export const REGISTRATION_PARSER_VERSION = 'registration-v1@1';

/** Deepest nesting of arrays and objects read (a registration file needs four levels). */
export const MAX_JSON_DEPTH = 32;
/** Services kept per file (the rest is a problem: `services` `too_many`). */
export const MAX_SERVICES = 32;
const MAX = { name: 200, description: 4000, image: 2048, type: 64, url: 2048, version: 64, trust: 64 };
const MAX_TRUST_ITEMS = 16;

export interface Problem {
  field: string;
  problem: string;
}

/** How a service is probed for liveness: A2A card, MCP handshake, web 2xx; `none` is not an http(s) URL. */
export type ProbeKind = 'a2a' | 'mcp' | 'web' | 'none';

export interface ServiceEntry {
  /** The service's name as declared (A2A, MCP, web, OASF, ENS, …). */
  type: string;
  /** As declared (an http(s) URL, an ENS name, a DID, an address, …). */
  url: string;
  version: string | null;
  probeKind: ProbeKind;
  /** Lower-cased host[:port] of an http(s) URL, else null. */
  host: string | null;
  https: boolean;
}

/** The agent a file is read for: its own registry and id. */
export interface AgentIdentity {
  network: string;
  kind: 'evm' | 'solana';
  chainId: number | null;
  identityRegistry: string | null;
  agentId: string;
}

export type RegistrationsCheck = 'listed' | 'absent' | 'mismatch';

export interface ParsedRegistration {
  /** False: the bytes are no JSON object at all (then nothing below was read). */
  json: boolean;
  problems: Problem[];
  name: string | null;
  description: string | null;
  image: string | null;
  services: ServiceEntry[];
  x402Support: boolean | null;
  active: boolean | null;
  supportedTrust: string[];
  registrationsCheck: RegistrationsCheck;
}

// eslint-disable-next-line no-control-regex -- the control characters are what is replaced
const CONTROL_RE = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/g;
const LONE_SURROGATE_RE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** A declared string as kept: control characters and lone surrogates replaced, trimmed, capped. */
export function cleanText(s: string, max: number, keepNewlines = false): string {
  const replaced = (keepNewlines ? s : s.replace(/[\n\r\t]/g, ' '))
    .replace(CONTROL_RE, '\uFFFD')
    .replace(LONE_SURROGATE_RE, '\uFFFD')
    .trim();
  return replaced.length <= max ? replaced : replaced.slice(0, max);
}

/** True when `text` nests arrays/objects deeper than `max` (strings are skipped; no recursion). */
export function jsonDepthExceeds(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
      continue;
    }
    if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** The decimal form of an EVM agent id written as a number or a string of digits; null otherwise. */
function evmId(v: unknown): string | null {
  if (typeof v === 'number') return Number.isSafeInteger(v) && v >= 0 ? String(v) : null;
  if (typeof v === 'string' && /^\s*\d{1,78}\s*$/.test(v)) return BigInt(v.trim()).toString();
  return null;
}

/**
 * Whether a `registrations` value names this agent: `listed` (an entry with its registry and id),
 * `absent` (none given) or `mismatch` (entries, none of them this agent). On an EVM chain the
 * registry is `eip155:{chainId}:{identityRegistry}` (address in any case) and the id the counter;
 * on Solana the id is the asset key, unique by itself, and the registry is not compared.
 */
export function listsAgent(registrations: unknown, self: AgentIdentity): RegistrationsCheck {
  if (!Array.isArray(registrations) || registrations.length === 0) return 'absent';
  const wantRegistry =
    self.kind === 'evm' && self.chainId !== null && self.identityRegistry !== null
      ? `eip155:${self.chainId}:${self.identityRegistry}`.toLowerCase()
      : null;
  const n = Math.min(registrations.length, 256);
  for (let i = 0; i < n; i++) {
    const r: unknown = registrations[i];
    if (!isObject(r)) continue;
    if (self.kind === 'solana') {
      if (typeof r.agentId === 'string' && r.agentId.trim() === self.agentId) return 'listed';
      continue;
    }
    const registry = typeof r.agentRegistry === 'string' ? r.agentRegistry.trim().toLowerCase() : null;
    if (registry !== null && registry === wantRegistry && evmId(r.agentId) === self.agentId) return 'listed';
  }
  return 'mismatch';
}

/** The host of an http(s) URL (lower case, with a port when not the default); null otherwise. */
function httpUrl(raw: string): { host: string; https: boolean } | null {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return null;
  }
  if ((u.protocol !== 'http:' && u.protocol !== 'https:') || u.username || u.password || u.host === '')
    return null;
  return { host: u.host.toLowerCase(), https: u.protocol === 'https:' };
}

function probeKindOf(type: string, http: boolean): ProbeKind {
  if (!http) return 'none';
  const t = type.toLowerCase();
  return t === 'a2a' ? 'a2a' : t === 'mcp' ? 'mcp' : 'web';
}

/** The services of a file (services[], else the older endpoints[]), with their problems. */
function readServices(doc: Record<string, unknown>, problems: Problem[]): ServiceEntry[] {
  const key = 'services' in doc ? 'services' : 'endpoints' in doc ? 'endpoints' : null;
  if (key === null) return [];
  const list = doc[key];
  if (!Array.isArray(list)) {
    problems.push({ field: key, problem: 'not_an_array' });
    return [];
  }
  if (list.length > MAX_SERVICES) problems.push({ field: key, problem: 'too_many' });
  const out: ServiceEntry[] = [];
  for (let i = 0; i < Math.min(list.length, MAX_SERVICES); i++) {
    const s: unknown = list[i];
    const at = `${key}[${i}]`;
    if (!isObject(s)) {
      problems.push({ field: at, problem: 'not_an_object' });
      continue;
    }
    const rawName = typeof s.name === 'string' ? s.name : typeof s.type === 'string' ? s.type : null;
    const rawUrl = typeof s.endpoint === 'string' ? s.endpoint : typeof s.url === 'string' ? s.url : null;
    if (rawName === null || rawName.trim() === '') problems.push({ field: `${at}.name`, problem: 'missing' });
    if (rawUrl === null || rawUrl.trim() === '') {
      problems.push({ field: `${at}.endpoint`, problem: 'missing' });
      continue;
    }
    const type = rawName === null ? '' : cleanText(rawName, MAX.type);
    const url = cleanText(rawUrl, MAX.url);
    const http = /^https?:/i.test(url) ? httpUrl(url) : null;
    if (/^https?:/i.test(url) && http === null)
      problems.push({ field: `${at}.endpoint`, problem: 'bad_url' });
    out.push({
      type,
      url,
      version:
        typeof s.version === 'string' && s.version.trim() !== '' ? cleanText(s.version, MAX.version) : null,
      probeKind: probeKindOf(type, http !== null),
      host: http?.host ?? null,
      https: http?.https ?? false,
    });
  }
  return out;
}

const EMPTY: Omit<ParsedRegistration, 'json' | 'problems'> = {
  name: null,
  description: null,
  image: null,
  services: [],
  x402Support: null,
  active: null,
  supportedTrust: [],
  registrationsCheck: 'absent',
};

/** The first JSON value of `bytes` when it is an object, else why not. */
export function readJsonObject(
  bytes: Uint8Array,
): { ok: true; doc: Record<string, unknown> } | { ok: false; problem: string } {
  const text = new TextDecoder('utf-8').decode(bytes).replace(/^\uFEFF/, '');
  if (jsonDepthExceeds(text, MAX_JSON_DEPTH)) return { ok: false, problem: 'too_deep' };
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return { ok: false, problem: 'not_json' };
  }
  return isObject(doc) ? { ok: true, doc } : { ok: false, problem: 'not_an_object' };
}

/** Reads a registration file for `self`; never throws. */
export function parseRegistration(bytes: Uint8Array, self: AgentIdentity): ParsedRegistration {
  const read = readJsonObject(bytes);
  if (!read.ok) return { json: false, problems: [{ field: '(file)', problem: read.problem }], ...EMPTY };
  const doc = read.doc;
  const problems: Problem[] = [];
  const text = (field: string, max: number, required: boolean, keepNewlines = false): string | null => {
    const v = doc[field];
    if (v === undefined || v === null) {
      if (required) problems.push({ field, problem: 'missing' });
      return null;
    }
    if (typeof v !== 'string') {
      problems.push({ field, problem: 'not_a_string' });
      return null;
    }
    const t = cleanText(v, max, keepNewlines);
    if (t === '' && required) problems.push({ field, problem: 'empty' });
    return t === '' ? null : t;
  };
  const flag = (field: string): boolean | null => {
    const v = doc[field];
    if (v === undefined || v === null) return null;
    if (typeof v !== 'boolean') {
      problems.push({ field, problem: 'not_a_boolean' });
      return null;
    }
    return v;
  };

  const type = doc.type;
  if (type === undefined || type === null) problems.push({ field: 'type', problem: 'missing' });
  else if (typeof type !== 'string' || !type.trim().toLowerCase().endsWith('eip-8004#registration-v1'))
    problems.push({ field: 'type', problem: 'unexpected_value' });
  const name = text('name', MAX.name, true);
  const description = text('description', MAX.description, false, true);
  const image = text('image', MAX.image, false);
  const services = readServices(doc, problems);
  const x402Support = flag('x402Support' in doc ? 'x402Support' : 'x402support');
  const active = flag('active');

  let supportedTrust: string[] = [];
  const trust = doc.supportedTrust;
  if (trust !== undefined && trust !== null) {
    if (!Array.isArray(trust)) problems.push({ field: 'supportedTrust', problem: 'not_an_array' });
    else
      supportedTrust = trust
        .slice(0, MAX_TRUST_ITEMS)
        .filter((t): t is string => typeof t === 'string' && t.trim() !== '')
        .map((t) => cleanText(t, MAX.trust));
  }

  const regs = doc.registrations;
  if (regs !== undefined && regs !== null && !Array.isArray(regs))
    problems.push({ field: 'registrations', problem: 'not_an_array' });
  const registrationsCheck = listsAgent(regs, self);
  if (registrationsCheck === 'mismatch')
    problems.push({ field: 'registrations', problem: 'does_not_list_this_agent' });

  return {
    json: true,
    problems,
    name,
    description,
    image,
    services,
    x402Support,
    active,
    supportedTrust,
    registrationsCheck,
  };
}
