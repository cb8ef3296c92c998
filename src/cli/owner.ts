import type { Command } from 'commander';
import type { App } from '../app.js';
import type { UserRow } from '../projections/principals.js';
import { CliError, globals, requireInitialized } from './shared.js';

/**
 * Opens an initialized data dir for an owner command and closes it after `fn`. The app is imported here,
 * when an action runs, so that defining the commands (and `--help`) stays cheap.
 */
export async function withOwner<T>(
  cmd: Command,
  fn: (app: App, owner: UserRow) => T | Promise<T>,
  open: { signingKeyLost?: boolean } = {},
): Promise<T> {
  const { dataDir, durability } = globals(cmd);
  requireInitialized(dataDir);
  const [{ openApp }, { ownerOf }] = await Promise.all([import('../app.js'), import('../actions/principals.js')]);
  const app = openApp({ dataDir, durability, ...open });
  try {
    const owner = ownerOf(app);
    if (!owner) throw new CliError(`${dataDir} has no owner yet (run "colony init")`);
    return await fn(app, owner);
  } finally {
    app.engine.close();
  }
}
