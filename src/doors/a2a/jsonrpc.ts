/**
 * The JSON-RPC 2.0 envelope of the A2A door: parsing a request body into one of four outcomes, and
 * building the answers. Pure functions, no I/O.
 *
 * Choices where the contract is silent (all deliberate, all tested):
 * - A batch (a JSON array, empty or not) is NOT served: A2A defines no batch, and the contract says
 *   "not a JSON-RPC 2.0 object → -32600". One `-32600` answer with `id: null`, never one per element.
 * - `id` must be present and be a string, an integer or null. An absent `id` (a JSON-RPC
 *   notification, which expects no answer) is `-32600`: this door only answers. A non-integer
 *   number, a boolean, an object or an array is `-32600` too. Integers must be safe integers
 *   (|id| ≤ 2^53-1) so they can be echoed back exactly; a larger one is `-32600`.
 * - An error answer echoes the request's `id` when that `id` itself was well formed, else `null`.
 * - `params` may be absent or null (both fall through to the status answer); when present it must
 *   be an object or an array (JSON-RPC 2.0 "structured value"), else `-32600`. Inside `params`
 *   nothing is rejected: whatever is not a text part is ignored.
 * - The Content-Type header is not checked: the body is parsed as JSON whatever it says.
 */

const JSONRPC_VERSION = '2.0';

/** JSON-RPC 2.0 error codes used by this door. */
export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;
const METHOD_NOT_FOUND = -32601;
const INTERNAL_ERROR = -32603;

/** The only method served. */
const MESSAGE_SEND = 'message/send';

export type JsonRpcId = string | number | null;

export interface JsonRpcError {
  code: number;
  message: string;
  data?: Record<string, unknown>;
}

interface JsonRpcErrorResponse {
  jsonrpc: '2.0';
  id: JsonRpcId;
  error: JsonRpcError;
}

interface JsonRpcSuccess<T> {
  jsonrpc: '2.0';
  id: JsonRpcId;
  result: T;
}

type ParsedRequest =
  /** The body is not JSON at all (HTTP 400). */
  | { kind: 'parse-error'; error: JsonRpcErrorResponse }
  /** JSON, but not a JSON-RPC 2.0 request object (HTTP 200). */
  | { kind: 'invalid'; error: JsonRpcErrorResponse }
  /** A well-formed request for a method this door does not serve (HTTP 200). */
  | { kind: 'unknown-method'; error: JsonRpcErrorResponse }
  /** A well-formed `message/send`. `params` is undefined when absent or null. */
  | { kind: 'message-send'; id: JsonRpcId; params: unknown };

export function errorResponse(
  id: JsonRpcId,
  code: number,
  message: string,
  data?: Record<string, unknown>,
): JsonRpcErrorResponse {
  return { jsonrpc: JSONRPC_VERSION, id, error: data ? { code, message, data } : { code, message } };
}

export function successResponse<T>(id: JsonRpcId, result: T): JsonRpcSuccess<T> {
  return { jsonrpc: JSONRPC_VERSION, id, result };
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A well-formed id: a string, a safe integer or null. */
function isValidId(v: unknown): v is JsonRpcId {
  return v === null || typeof v === 'string' || (typeof v === 'number' && Number.isSafeInteger(v));
}

/** A methods list an A2A client may try, named in the -32601 answer so the refusal is legible. */
const NOT_SERVED_NOTE =
  'This door serves only message/send (a blocking request answered by one message). There is no streaming ' +
  '(message/stream), no task (tasks/get, tasks/cancel, tasks/resubscribe), no push notification ' +
  '(tasks/pushNotificationConfig/*) and no authenticated extended card.';

function invalid(id: JsonRpcId, why: string): ParsedRequest {
  return { kind: 'invalid', error: errorResponse(id, INVALID_REQUEST, `Invalid Request: ${why}`) };
}

/** Classifies a request body (already bounded in size by the caller). */
export function parseRequest(body: string): ParsedRequest {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return {
      kind: 'parse-error',
      error: errorResponse(
        null,
        PARSE_ERROR,
        'Parse error: the body is not valid JSON. Send one JSON-RPC 2.0 request object.',
      ),
    };
  }
  if (Array.isArray(value)) {
    return invalid(null, 'batches are not served; send one JSON-RPC 2.0 request object per POST');
  }
  if (!isPlainObject(value)) return invalid(null, 'the body must be a JSON-RPC 2.0 request object');

  const hasId = Object.prototype.hasOwnProperty.call(value, 'id');
  const idOk = hasId && isValidId(value.id);
  const echo: JsonRpcId = idOk ? (value.id as JsonRpcId) : null;

  if (value.jsonrpc !== JSONRPC_VERSION) return invalid(echo, 'jsonrpc must be the string "2.0"');
  if (!hasId) {
    return invalid(
      null,
      'id is required (a string, an integer or null): notifications are not served, this door only answers',
    );
  }
  if (!idOk) return invalid(null, 'id must be a string, an integer (|id| <= 2^53-1) or null');
  if (typeof value.method !== 'string') return invalid(echo, 'method must be a string');
  const params = value.params;
  if (params !== undefined && params !== null && typeof params !== 'object') {
    return invalid(echo, 'params, when present, must be an object');
  }
  if (value.method !== MESSAGE_SEND) {
    return {
      kind: 'unknown-method',
      error: errorResponse(echo, METHOD_NOT_FOUND, `Method not found. ${NOT_SERVED_NOTE}`, {
        supported_methods: [MESSAGE_SEND],
      }),
    };
  }
  return { kind: 'message-send', id: echo, params: params ?? undefined };
}

/** The answer to a request whose handling threw: no detail of the failure leaves the process. */
export function internalError(id: JsonRpcId): JsonRpcErrorResponse {
  return errorResponse(
    id,
    INTERNAL_ERROR,
    'Internal error: the index could not answer this message. Retry later.',
  );
}
