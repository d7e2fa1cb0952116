/**
 * The background rater-evidence run over the whole index (issue 32) as the scale benchmark runs
 * it before its paid rows: 50 raters first get a verified USDC payment (graph seeds), so the
 * personalized PageRank runs too.
 */
import type { Database } from '../../src/db/database.js';
import { refreshRaterEvidence } from '../../src/raters/refresh.js';
import { mbOf, notePeak, withPeak } from './timing.js';

/** What the RESULT line carries of the run. */
export interface EvidenceRun {
  ms: number;
  peak_mb: number;
  raters: number;
  cohorts: number;
  iterations: number;
}

/** Seeds the paid raters, runs the evidence refresh (forced), prints its line and returns it. */
export async function raterEvidenceRun(db: Database): Promise<EvidenceRun> {
  await db.query(
    `INSERT INTO feedback_documents (network, tx_hash, log_index, agent_id, rater, block_number, uri, state, payment_state, payment_proof)
     SELECT DISTINCT ON (rater) network, tx_hash, log_index, agent_id, rater, block_number, 'https://f.example/x', 'succeeded',
            'verified', '{"chainId": 8453, "token": "0x833589fcd6edb6e08f4c7c32d4f71b54bda02913", "amount": "1000000"}'::jsonb
       FROM ratings WHERE rater IN (SELECT DISTINCT rater FROM ratings ORDER BY rater LIMIT 50) AND NOT revoked
       ORDER BY rater, block_number
     ON CONFLICT DO NOTHING`,
  );
  const t0 = performance.now();
  const { value: r, peak } = await withPeak(() =>
    refreshRaterEvidence(db, { knownRelayers: [], valuedTokens: [], force: true }),
  );
  notePeak(peak);
  const evidenceRun = {
    ms: Math.round(performance.now() - t0),
    peak_mb: mbOf(peak),
    raters: r.raters,
    cohorts: r.cohorts,
    iterations: r.iterations,
  };
  console.log(
    `rater-evidence run: ${r.raters} raters, ${r.seeds} seeds, ${r.cohorts} cohorts, PageRank ${r.iterations} iterations: ` +
      `${evidenceRun.ms} ms, peak RSS ${evidenceRun.peak_mb} MB`,
  );
  return evidenceRun;
}
