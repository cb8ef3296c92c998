import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { colony, colonyLive, logHead, type CliResult, type LiveCli } from './cli.js';
import { tempDir } from '../../testkit/temp-dir.js';
import { startModelEndpoint, type ModelEndpoint, type ModelScript } from '../../testkit/model-endpoint/index.js';

/**
 * A Colony whose agents are real CLI binaries (this checkout's devDependencies) talking to the project's
 * scripted model endpoint: a data dir, the team's runtime, the endpoint's URL and a key as the owner's
 * secrets (what a person does with a real key), and `serve` with the host's network inside the sandbox
 * (the endpoint listens on this host's loopback). Everything else is as in production: the real CLI,
 * `serve`, the sandbox, MCP.
 */
export interface RealColony {
  dir: string;
  endpoint: ModelEndpoint;
  cli(args: string[], env?: NodeJS.ProcessEnv): CliResult;
  ok(args: string[]): string;
  serve(env?: NodeJS.ProcessEnv): Promise<LiveCli>;
  until<T>(what: string, probe: () => T | null, timeoutMs?: number): Promise<T>;
  runs(): RunJson[];
  /** Run N once it has ended (not queued or running). */
  ended(n: number): Promise<RunJson>;
  /**
   * Every run so far, once none is queued or running. A goal completes inside a run's tool call, while that
   * run's CLI (and a worker's, just handed in) may still be exiting: its row is final only after.
   */
  settled(): Promise<RunJson[]>;
  dms(): string[];
  close(): Promise<void>;
}

export interface RunJson {
  run_id: number;
  agent_id: number;
  task_id: number | null;
  status: string;
  reason: string | null;
  cause: string | null;
  runtime: string | null;
  cost_cents: number;
  cost_known: boolean;
  billing_lane: string | null;
  tokens_in: number;
  tokens_out: number;
  cli_session: string | null;
}

export async function realColony(
  prefix: string,
  script: ModelScript,
  secrets: Record<string, (url: string) => string>,
  env: NodeJS.ProcessEnv = {},
): Promise<RealColony> {
  const scratch = tempDir(prefix);
  const endpoint = await startModelEndpoint(script, { models: ['claude-sonnet-4-5', 'gpt-5', 'scripted-model'] });
  const base = { COLONY_DATA: join(scratch.dir, '.colony'), COLONY_PORT: '0', COLONY_NETWORK: 'host', ...env };
  const cli = (args: string[], more: NodeJS.ProcessEnv = {}) => colony(args, { ...base, ...more });
  const ok = (args: string[]) => {
    const r = cli(args);
    assert.equal(r.code, 0, `colony ${args.join(' ')}\n${r.stdout}${r.stderr}`);
    return r.stdout;
  };
  ok(['init', '--json']);
  for (const [name, value] of Object.entries(secrets))
    ok(['secrets', 'set', name, value(endpoint.url), '--scope', 'user:owner']);
  const lives: LiveCli[] = [];
  const runs = () => JSON.parse(ok(['runs', 'list', '--json'])) as RunJson[];
  // The probes run the real CLI, which costs ~0.5 s of CPU and blocks this process (and so the model
  // endpoint the agents' CLIs are waiting on) while it runs: a probe runs again only once the log moved,
  // which every change it can see (a run's status, a task's, a goal's) does.
  const until = async <T>(what: string, probe: () => T | null, timeoutMs = 120_000): Promise<T> => {
    const end = Date.now() + timeoutMs;
    let seen = -1;
    for (;;) {
      const head = logHead(base.COLONY_DATA);
      if (head !== seen) {
        seen = head;
        const v = probe();
        if (v !== null && v !== undefined && v !== false) return v;
      }
      if (Date.now() > end) assert.fail(`${what}: not seen in ${timeoutMs / 1000} s; runs: ${JSON.stringify(runs())}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  };
  return {
    dir: scratch.dir,
    endpoint,
    cli,
    ok,
    async serve(more: NodeJS.ProcessEnv = {}) {
      const s = colonyLive(['serve', '--port', '0'], { ...base, ...more });
      lives.push(s);
      await s.waitFor(/^Colony listening on /, 'stderr');
      return s;
    },
    until,
    runs,
    ended(n: number): Promise<RunJson> {
      return until(`run ${n} ended`, () => {
        const r = runs().find((x) => x.run_id === n);
        return r && r.status !== 'queued' && r.status !== 'running' ? r : null;
      });
    },
    settled(): Promise<RunJson[]> {
      return until('every run ended', () => {
        const all = runs();
        return all.every((r) => r.status !== 'queued' && r.status !== 'running') ? all : null;
      });
    },
    dms: () => {
      // The read table, read-only beside the serving process (WAL): the system DMs the owner got.
      const db = new Database(join(base.COLONY_DATA, 'colony.db'), { readonly: true });
      try {
        return (
          db
            .prepare(
              `SELECT body FROM messages WHERE from_key = 'system' AND json_extract(metadata, '$.event') = 'RunFailed' ORDER BY message_id`,
            )
            .all() as {
            body: string;
          }[]
        ).map((m) => m.body);
      } finally {
        db.close();
      }
    },
    async close() {
      for (const s of lives) await s.stop();
      await endpoint.close();
      scratch.cleanup();
    },
  };
}

export function promptFile(dir: string, text = 'You do the work you are given, through Colony.'): string {
  const file = join(dir, `prompt-${Math.random().toString(36).slice(2)}.md`);
  writeFileSync(file, text);
  return file;
}
