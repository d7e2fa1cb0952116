/**
 * The demo's evidence agent (src/demo/documents.ts, played by `repindex demo`): on a local base
 * chain with its own document server, indexed by the real pass and fetched by the real fetcher,
 * the paid agent detail shows every case — each integrity state, field mismatches, a verified
 * payment, a proof naming a transfer to someone else, a proof naming no transaction, a proof on a
 * chain the demo does not index, an ipfs document waiting for a gateway, and the owner's and a
 * third party's responses. Runs on PGlite and (with DATABASE_URL) PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DOCUMENT_CASES,
  fetchDemoDocuments,
  playDocumentScenario,
  startDocumentServer,
  type DocumentCase,
  type DocumentFacts,
  type DocumentServer,
} from '../src/demo/documents.js';
import { giveFeedback, registerAgent } from '../src/demo/registries.js';
import { runIndexPass } from '../src/indexer/pass.js';
import { agentDetailHandler } from '../src/paid/agent-detail.js';
import { openTestDatabase, type TestDatabase } from './helpers/db.js';
import {
  configFor,
  quietLogger,
  startLocalChain,
  target,
  type LocalChain,
} from './helpers/indexer-fixtures.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- the served JSON is read field by field */

let chain: LocalChain;
let t: TestDatabase;
let server: DocumentServer;
let facts: DocumentFacts;
let ratings: Map<DocumentCase, any>;
let body: any;

beforeAll(async () => {
  [chain, t, server] = await Promise.all([
    startLocalChain('base', 8453),
    openTestDatabase(),
    startDocumentServer(),
  ]);
  facts = await playDocumentScenario(chain.node, chain.reg, server);
  // Another agent's rating naming an outside host: the demo's fetch must leave it alone (offline).
  const { agentId: other } = await registerAgent(
    chain.reg,
    chain.node.privateKeys[1]!,
    'https://x.example/a.json',
  );
  await giveFeedback(chain.reg, chain.node.privateKeys[2]!, {
    agentId: other,
    value: 50,
    feedbackURI: 'https://feedback.alpha.example/r/1',
  });
  const config = configFor([target(chain, { startBlock: 0 })]);
  const pass = await runIndexPass({ db: t.db, config, log: quietLogger(), afterPass: null, progress: 'off' });
  if (pass.status !== 'ok' || pass.failed.length > 0) throw new Error('index pass failed');
  await fetchDemoDocuments(t.db, config, server, facts);
  const ctx = { config, db: t.db, now: () => new Date() };
  const v = await agentDetailHandler.validate(ctx, {
    params: { network: 'base', agent_id: facts.agentId },
    query: {},
  });
  if (!v.ok) throw new Error(JSON.stringify(v.body));
  body = JSON.parse(JSON.stringify((await agentDetailHandler.run(ctx, v.input, { receipt: null })).body));
  ratings = new Map(
    DOCUMENT_CASES.map((c) => [c, body.ratings.find((r: any) => r.feedback_uri === facts.uris[c])]),
  );
}, 180_000);

afterAll(async () => {
  await server?.close();
  await t?.close();
  await chain?.close();
});

describe("the demo's evidence agent", () => {
  it('has one rating per case, each with its document', () => {
    expect(body.ratings).toHaveLength(DOCUMENT_CASES.length);
    for (const c of DOCUMENT_CASES) expect(ratings.get(c)?.document, c).not.toBeNull();
  });

  it('shows every integrity state', () => {
    const integrity = (c: DocumentCase) => ratings.get(c).document.integrity_state;
    expect(integrity('match_verified_payment')).toBe('match');
    expect(integrity('hash_mismatch')).toBe('mismatch');
    expect(integrity('no_commitment_with_field_mismatches')).toBe('no_commitment');
    expect(integrity('not_json')).toBe('not_json');
    expect(integrity('unreachable')).toBe('unreachable');
    expect(integrity('changed')).toBe('changed');
    expect(ratings.get('unreachable').document.state).toBe('failed');
    expect(ratings.get('ipfs_waiting_for_gateway').document).toMatchObject({
      state: 'queued',
      integrity_state: null,
      last_error_code: 'no_ipfs_gateway',
    });
    expect(
      ratings.get('no_commitment_with_field_mismatches').document.mismatches.map((m: any) => m.field),
    ).toEqual(['agentId', 'value', 'tag1']);
  });

  it('shows a verified payment on its base chain and every way a proof fails', () => {
    expect(ratings.get('match_verified_payment').payment_proof).toMatchObject({
      state: 'verified',
      tx_hash: facts.paymentTx,
      to_address: facts.owner.toLowerCase(),
      token: facts.token.toLowerCase(),
      amount: facts.paymentAmount,
    });
    expect(ratings.get('paid_someone_else').payment_proof).toMatchObject({
      state: 'mismatch',
      reason: 'no_matching_transfer',
    });
    expect(ratings.get('proof_not_found').payment_proof.state).toBe('not_found');
    expect(ratings.get('proof_other_chain').payment_proof.state).toBe('unsupported_chain');
    expect(body.evidence).toMatchObject({ ratings_with_verified_payment: 1, moves_score: false });
  });

  it("shows the owner's and a third party's responses", () => {
    expect(ratings.get('match_verified_payment').responses.map((r: any) => r.responder_class)).toEqual([
      'owner',
      'third_party',
    ]);
    expect(ratings.get('match_verified_payment').author_class).toBe('rater-authored');
  });

  it("fetches only its own documents: another agent's outside URI is never looked up", async () => {
    const [row] = await t.db.query<{ state: string; attempts: number }>(
      `SELECT state, attempts FROM feedback_documents WHERE uri = 'https://feedback.alpha.example/r/1'`,
    );
    expect(row).toEqual({ state: 'queued', attempts: 0 });
  });
});
