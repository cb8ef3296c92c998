import { RUNTIMES, type Runtime } from '../events/principals.js';
import { CliError } from './shared.js';

/**
 * The configuration-time checks of a runtime (`agents create|update --runtime`, `config set
 * agent-runtime`): a runtime Colony knows, its CLI found where a sandbox can run it, a model string the CLI
 * takes. Each refusal names the fix, and comes before anything is written. The adapters are loaded only
 * here, when a runtime is given.
 */
export function parseRuntime(raw: string | undefined, flag = '--runtime'): Runtime | undefined {
  if (raw === undefined) return undefined;
  if (!RUNTIMES.includes(raw as Runtime))
    throw new CliError(`${flag} must be one of ${RUNTIMES.join(', ')}, not "${raw}"`);
  return raw as Runtime;
}

/** Its CLI resolves and can be mounted, and it takes each of the models; `command` needs a command line somewhere. */
export async function checkRuntime(
  runtime: Runtime,
  models: readonly { agent: string; model: string }[],
  hasCommand: boolean,
): Promise<void> {
  if (runtime === 'command') {
    if (!hasCommand)
      throw new CliError(
        "runtime command runs a command line, and there is none: give --command CMD, or set the team's (colony config set agent-command CMD)",
      );
    return;
  }
  const [{ adapterFor }, { resolveBinary }] = await Promise.all([
    import('../runtime/adapters/index.js'),
    import('../runtime/adapters/binary.js'),
  ]);
  const adapter = adapterFor(runtime)!;
  for (const m of models) {
    const problem = adapter.checkModel(m.model);
    if (problem) throw new CliError(`runtime ${runtime} for ${m.agent}: ${problem} (give --model)`);
  }
  const bin = resolveBinary(adapter.needs);
  if ('problem' in bin) throw new CliError(`runtime ${runtime}: ${bin.problem}`);
}
