import { ToolRegistry } from '../registry.js';
import { agentTools } from './agents.js';
import { capabilityTools } from './capabilities.js';
import { channelTools } from './channels.js';
import { myStatus } from './channels-status.js';
import { goalTools } from './goals.js';
import { principalTools } from './principals.js';
import { resourceTools } from './resources.js';
import { secretTools } from './secrets.js';
import { taskTools } from './tasks.js';
import { taskBlockerTools } from './task-blockers.js';
import { projectTaskTools } from './project-tasks.js';
import { probeTools } from './probes.js';
import { executeTools } from './execute.js';
import { sessionTools } from './sessions.js';
import { agentViewTools } from './agent-views.js';
import { projectTools } from './projects.js';
import { healthTools } from './health.js';
import { webappTools } from './webapps.js';
import { verifierTools } from './verifiers.js';
import { reviewTools } from './review.js';

/** Every domain's tools, registered in a fixed order (first registration wins). */
export function buildToolRegistry(): ToolRegistry {
  return new ToolRegistry().register(
    ...principalTools,
    ...channelTools,
    myStatus,
    ...goalTools,
    ...taskTools,
    ...taskBlockerTools,
    ...projectTaskTools,
    ...agentTools,
    ...resourceTools,
    ...secretTools,
    ...capabilityTools,
    ...sessionTools,
    ...agentViewTools,
    ...executeTools,
    ...probeTools,
    ...projectTools,
    ...healthTools,
    ...webappTools,
    ...verifierTools,
    ...reviewTools,
  );
}
