import type { App } from '../app.js';
import { VERSION } from '../version.js';
import { AuditLog } from './audit.js';
import { Authenticator } from './auth.js';
import { Confirmations } from './confirm.js';
import { PathPolicy } from './paths.js';
import type { ToolRegistry } from './registry.js';

/** What every MCP session of one Colony process shares. */
export interface McpContext {
  readonly app: App;
  readonly tools: ToolRegistry;
  readonly audit: AuditLog;
  readonly confirmations: Confirmations;
  readonly paths: PathPolicy;
  readonly version: string;
  readonly auth: Authenticator;
}

export function createMcpContext(app: App, tools: ToolRegistry, options: { audit?: AuditLog; confirmations?: Confirmations } = {}): McpContext {
  return {
    app,
    tools,
    audit: options.audit ?? AuditLog.open(app.dataDir),
    confirmations: options.confirmations ?? new Confirmations(),
    paths: PathPolicy.forDataDir(app.dataDir),
    version: VERSION,
    auth: new Authenticator(app),
  };
}
