/**
 * Compiles the project's own ERC-8004 registries with the `solc` npm package (the bundled
 * wasm/asm.js compiler: nothing is downloaded) and writes one artifact per contract:
 *   contracts/artifacts/<Name>.json = { contractName, abi, bytecode }
 *
 * Output is deterministic (fixed source keys, fixed settings, stable JSON formatting), so a rebuild
 * of unchanged sources leaves the committed artifacts byte-identical.
 *
 * Usage: npx tsx contracts/build.ts   (npm run contracts:build)
 *        npx tsx contracts/build.ts --out <dir>   (writes the artifacts there instead; the test
 *        suite compiles into its own folder and compares the result with the committed files)
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import solc from 'solc';

const CONTRACTS_DIR = dirname(fileURLToPath(import.meta.url));
const ARTIFACTS_DIR = join(CONTRACTS_DIR, 'artifacts');
// TestUSDC: a test-only EIP-3009 token for the x402 end-to-end tests (never deployed on a real network).
// Multicall3: the project's own `aggregate3` (the census's batching), put at its canonical address.
const CONTRACTS = ['IdentityRegistry', 'ReputationRegistry', 'TestUSDC', 'Multicall3'] as const;
/**
 * Contracts placed by their runtime code (local nodes install it at a fixed address from genesis,
 * no deployment): their artifact carries `deployedBytecode` too.
 */
const WITH_RUNTIME: ReadonlySet<string> = new Set(['Multicall3']);

/** The compiler version the sources pin (`pragma solidity 0.8.30`). */
const EXPECTED_SOLC = '0.8.30';

interface SolcError {
  severity: 'error' | 'warning' | 'info';
  formattedMessage: string;
}

interface SolcOutput {
  errors?: SolcError[];
  contracts?: Record<
    string,
    Record<
      string,
      { abi: unknown[]; evm: { bytecode: { object: string }; deployedBytecode: { object: string } } }
    >
  >;
}

export interface ContractArtifact {
  contractName: string;
  abi: unknown[];
  bytecode: `0x${string}`;
  /** Runtime code (contracts of WITH_RUNTIME only). */
  deployedBytecode?: `0x${string}`;
}

export async function buildContracts(): Promise<ContractArtifact[]> {
  const version = String(solc.version());
  if (!version.startsWith(EXPECTED_SOLC)) {
    throw new Error(`solc ${EXPECTED_SOLC} expected, the installed solc package is ${version}`);
  }

  const sources: Record<string, { content: string }> = {};
  for (const name of CONTRACTS) {
    // Source keys are relative paths: they enter the metadata hash, so they must not depend on
    // where the checkout lives.
    sources[`contracts/${name}.sol`] = {
      content: await readFile(join(CONTRACTS_DIR, `${name}.sol`), 'utf8'),
    };
  }

  const input = {
    language: 'Solidity',
    sources,
    settings: {
      optimizer: { enabled: true, runs: 200 },
      // giveFeedback takes four calldata strings (two stack slots each): the legacy pipeline runs
      // out of stack slots, the IR pipeline does not.
      viaIR: true,
      // Cancun: supported by EDR and by every L2 the index follows.
      evmVersion: 'cancun',
      outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object', 'evm.deployedBytecode.object'] } },
    },
  };

  const output = JSON.parse(solc.compile(JSON.stringify(input))) as SolcOutput;
  const problems = output.errors ?? [];
  for (const p of problems) {
    if (p.severity !== 'error') console.warn(p.formattedMessage);
  }
  const errors = problems.filter((p) => p.severity === 'error');
  if (errors.length > 0) {
    throw new Error(`solc failed:\n${errors.map((e) => e.formattedMessage).join('\n')}`);
  }

  const artifacts: ContractArtifact[] = [];
  for (const name of CONTRACTS) {
    const compiled = output.contracts?.[`contracts/${name}.sol`]?.[name];
    if (!compiled) throw new Error(`solc produced no output for ${name}`);
    artifacts.push({
      contractName: name,
      abi: compiled.abi,
      bytecode: `0x${compiled.evm.bytecode.object}`,
      ...(WITH_RUNTIME.has(name)
        ? { deployedBytecode: `0x${compiled.evm.deployedBytecode.object}` as const }
        : {}),
    });
  }
  return artifacts;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { out: { type: 'string' } } });
  const outDir = values.out ?? ARTIFACTS_DIR;
  const started = Date.now();
  const artifacts = await buildContracts();
  await mkdir(outDir, { recursive: true });
  for (const artifact of artifacts) {
    const file = join(outDir, `${artifact.contractName}.json`);
    await writeFile(file, `${JSON.stringify(artifact, null, 2)}\n`);
    console.log(`wrote ${file} (${(artifact.bytecode.length - 2) / 2} bytes of init code)`);
  }
  console.log(`compiled with solc ${String(solc.version())} in ${Date.now() - started} ms`);
}

// Run only when executed directly (the module can also be imported, e.g. by a test).
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
