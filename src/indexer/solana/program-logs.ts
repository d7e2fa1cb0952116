/**
 * The `Program data:` log extraction: the payloads the Solana program logged itself, found by
 * following the invoke depth of the transaction's log lines, so CPI logs of other programs are
 * never read as the program's events. No I/O.
 */

interface ProgramData {
  /** 0-based order of this program's `Program data:` lines in the transaction: a stable index. */
  index: number;
  /** The decoded payload; null when the base64 is malformed. */
  data: Uint8Array | null;
}

const INVOKE_RE = /^Program (\S+) invoke \[(\d+)\]$/;
const END_RE = /^Program (\S+) (success|failed|consumed)\b/;
const DATA_PREFIX = 'Program data: ';
const BASE64_RE = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * The `Program data:` payloads logged by `programId` itself (the innermost invoked program at the
 * line), in log order. Data lines of other programs (CPI callees, or callers of ours) are skipped.
 * `truncated` is true when the node cut the logs (`Log truncated`): later events are missing.
 */
export function extractProgramData(
  logs: readonly string[],
  programId: string,
): { items: ProgramData[]; truncated: boolean } {
  const stack: string[] = [];
  const items: ProgramData[] = [];
  let truncated = false;
  for (const line of logs) {
    if (typeof line !== 'string') continue;
    const inv = INVOKE_RE.exec(line);
    if (inv) {
      const depth = Number(inv[2]);
      // depth n means n − 1 programs are on the stack below it (a top-level instruction resets it)
      stack.length = Math.max(0, Math.min(stack.length, depth - 1));
      stack.push(inv[1]!);
      continue;
    }
    const end = END_RE.exec(line);
    if (end && end[2] !== 'consumed') {
      if (stack.length && stack[stack.length - 1] === end[1]) stack.pop();
      continue;
    }
    if (line === 'Log truncated') {
      truncated = true;
      continue;
    }
    if (line.startsWith(DATA_PREFIX) && stack.length && stack[stack.length - 1] === programId) {
      const b64 = line.slice(DATA_PREFIX.length).trim();
      const index = items.length;
      // Anchor logs one base64 field per event; more fields (space-separated) are not an event of ours
      const ok = b64.length > 0 && b64.length % 4 === 0 && BASE64_RE.test(b64);
      items.push({ index, data: ok ? new Uint8Array(Buffer.from(b64, 'base64')) : null });
    }
  }
  return { items, truncated };
}
