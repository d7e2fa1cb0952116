/**
 * Addresses shared by the scoring hand-computed tables (test/scoring-policies.test.ts,
 * test/scoring-subject.test.ts): one subject W (mixed case on purpose, w its lower case), four
 * raters and a Solana address whose case matters.
 */
export const W = '0xAbCdEf0000000000000000000000000000000001'; // subject, mixed case on purpose
export const w = W.toLowerCase();
export const R1 = '0x1111111111111111111111111111111111111111';
export const R2 = '0x2222222222222222222222222222222222222222';
export const R3 = '0x3333333333333333333333333333333333333333';
export const R4 = '0x4444444444444444444444444444444444444444';
export const SOL = 'DevFFyNWxZPtYLpEjzUnN1PFc9Po6PH7eZCi9f3tTkTw';
