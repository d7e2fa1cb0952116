/**
 * The one logger of the service (pino). JSON lines on stdout by default, one object per event
 * (chain text is hostile: every string is JSON-escaped, so a newline or a quote in a tag never
 * breaks a line); human-readable (pino-pretty) when stdout is a terminal. `LOG_LEVEL` (debug,
 * info, warn, error) sets the level; the CLI calls configureLogging() once the configuration is
 * validated. Under the test runner, without LOG_LEVEL, the default is silent.
 *
 * Use `logger('component')` at the call site: children are cached and follow reconfiguration.
 * Never log a payment header, an API key or a URL as given: `redactUrl` / `redactUrls` strip
 * credentials (user:password, query values, key-like path segments).
 */
import { pino, type DestinationStream, type Logger } from 'pino';
import pretty from 'pino-pretty';

type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';

interface LoggingOptions {
  level?: LogLevel;
  /** Human-readable lines instead of JSON. Default: when stdout is a terminal. */
  pretty?: boolean;
  /** Where lines go (tests); default stdout. */
  destination?: DestinationStream;
}

/** Headers and fields that must never reach a log line, even by mistake. */
const REDACT_PATHS = [
  'paymentHeader',
  'xPayment',
  'headers["x-payment"]',
  'headers["payment-signature"]',
  'headers.authorization',
  'headers.cookie',
  '*.headers["x-payment"]',
  '*.headers["payment-signature"]',
  '*.headers.authorization',
  'apiKey',
  'password',
];

function defaultLevel(): LogLevel {
  const env = process.env.LOG_LEVEL?.trim();
  if (env && ['debug', 'info', 'warn', 'error', 'silent'].includes(env)) return env as LogLevel;
  return process.env.VITEST ? 'silent' : 'info';
}

function build(opts: LoggingOptions): Logger {
  const usePretty = opts.pretty ?? (opts.destination === undefined && process.stdout.isTTY === true);
  const destination =
    opts.destination ??
    (usePretty
      ? pretty({ colorize: true, sync: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' })
      : pino.destination({ dest: 1, sync: true }));
  return pino(
    {
      level: opts.level ?? defaultLevel(),
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      serializers: { err: pino.stdSerializers.err },
    },
    destination,
  );
}

let root: Logger | null = null;
const children = new Map<string, Logger>();

function rootLogger(): Logger {
  root ??= build({});
  return root;
}

/** (Re)configures the process logger: level, format, destination. */
export function configureLogging(opts: LoggingOptions = {}): Logger {
  root = build(opts);
  children.clear();
  return root;
}

/**
 * The access log's logger (component `http`): its lines are built field by field from known-safe
 * values (method, route template, status, ms, client, payment outcome), so it skips the redaction
 * pass every other logger runs (about 6 µs a line, the access log's largest cost).
 */
export function accessLogger(): Logger {
  let child = children.get('http:access');
  if (!child) {
    child = rootLogger().child({ component: 'http' }, { redact: { paths: [] } });
    children.set('http:access', child);
  }
  return child;
}

/** The logger of one component (`http`, `index`, `payments`, `db`, `mcp`, …). */
export function logger(component?: string): Logger {
  if (!component) return rootLogger();
  let child = children.get(component);
  if (!child) {
    child = rootLogger().child({ component });
    children.set(component, child);
  }
  return child;
}

// ------------------------------------------------------------------ credentials out of URLs

/** A path segment that looks like an API key (Alchemy /v2/<key>, Infura /v3/<id>, QuickNode tokens). */
const KEY_SEGMENT = /^[A-Za-z0-9_-]{16,}$/;

/**
 * The URL without credentials: user and password removed, every query value replaced, key-like
 * path segments replaced. Not a URL: a fixed placeholder (the input is never echoed).
 */
export function redactUrl(raw: string): string {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return '[not a url]';
  }
  const hadAuth = u.username !== '' || u.password !== '';
  u.username = '';
  u.password = '';
  for (const key of [...new Set(u.searchParams.keys())]) u.searchParams.set(key, '***');
  u.pathname = u.pathname
    .split('/')
    .map((seg) => (KEY_SEGMENT.test(seg) ? '***' : seg))
    .join('/');
  u.hash = '';
  const out = u.toString();
  return hadAuth ? out.replace('://', '://***@') : out;
}

const URL_IN_TEXT = /\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>`]+/gi;

/** Every URL found in a text (an error message, a cause) with its credentials stripped. */
export function redactUrls(text: string): string {
  return text.replace(URL_IN_TEXT, (m) => redactUrl(m));
}
