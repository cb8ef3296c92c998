import type { Command } from 'commander';
import type { App } from '../app.js';
import type { AgentRow, UserRow } from '../projections/principal-queries.js';
import { appStore, CliError, globals, requireInitialized } from './shared.js';

/**
 * Opens an initialized data dir for an owner command and closes it after `fn`. The app is imported here,
 * when an action runs, so that defining the commands (and `--help`) stays cheap.
 */
export async function withOwner<T>(
  cmd: Command,
  fn: (app: App, owner: UserRow) => T | Promise<T>,
  open: { signingKeyLost?: boolean } = {},
): Promise<T> {
  const g = globals(cmd);
  const { dataDir, durability } = g;
  requireInitialized(dataDir, g.store);
  const [{ openApp }, { ownerOf }] = await Promise.all([import('../app.js'), import('../actions/principals.js')]);
  const app = openApp({ dataDir, durability, store: appStore(g), ...open });
  try {
    const owner = ownerOf(app);
    if (!owner) throw new CliError(`${dataDir} has no owner yet (run "colony init")`);
    return await fn(app, owner);
  } finally {
    app.engine.close();
  }
}

/** withOwner, for a command about one of the owner's agents by name: refused when the owner has none of that name. */
export function withAgent<T>(
  cmd: Command,
  name: string,
  fn: (app: App, owner: UserRow, agent: AgentRow) => T | Promise<T>,
): Promise<T> {
  return withOwner(cmd, async (app, owner) => {
    const { getAgentByName } = await import('../projections/principal-queries.js');
    const agent = getAgentByName(app.engine.db, owner.userId, name);
    if (!agent) throw new CliError(`agent ${name} not found`);
    return fn(app, owner, agent);
  });
}
