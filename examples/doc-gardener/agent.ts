/**
 * The doc-gardener's one runner program. Colony starts it for every run of every agent of the example
 * (spawned agents inherit their parent's backend command), the way it would start `claude -p` with a
 * different system prompt: what the agent does depends on COLONY_AGENT. It reads the wake prompt on
 * stdin, talks to Colony only through MCP (COLONY_URL, COLONY_TOKEN), and ends with Claude Code's
 * final usage line on stdout. Deterministic: no LLM, no network beyond loopback.
 *
 * DG_REPO (on the command line Colony runs) is the checkout whose CLI docs (docs/cli.md) and CLI are compared.
 */
import { Colony, usageLine } from './colony-client.js';
import { coordinate } from './coordinator.js';
import { verifyCli } from './cli-verifier.js';
import { scanDocs } from './docs-scanner.js';
import { COORDINATOR, SCANNER, VERIFIER, type RunContext } from './shared.js';

type Role = (ctx: RunContext) => Promise<string>;

const ROLES: Record<string, Role> = { [COORDINATOR]: coordinate, [SCANNER]: scanDocs, [VERIFIER]: verifyCli };

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

async function main(): Promise<number> {
  const prompt = await readStdin();
  const name = process.env.COLONY_AGENT ?? '';
  const role = ROLES[name];
  let colony: Colony | null = null;
  let result: string;
  let code = 0;
  try {
    if (!role) throw new Error(`no doc-gardener role for agent "${name}" (known: ${Object.keys(ROLES).join(', ')})`);
    const repo = process.env.DG_REPO;
    if (!repo) throw new Error('DG_REPO must name the repository to garden');
    colony = await Colony.connect();
    result = await role({ colony, env: process.env, prompt, repo });
  } catch (e) {
    result = `${name} failed: ${(e as Error).message}`;
    process.stderr.write(`${(e as Error).stack ?? result}\n`);
    code = 1;
  } finally {
    await colony?.close();
  }
  process.stdout.write(`${result}\n${usageLine(colony, prompt, result)}\n`);
  return code;
}

process.exitCode = await main();
