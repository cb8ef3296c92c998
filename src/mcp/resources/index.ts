/** MCP resources: the data layer the server registers for both protocol revisions (server-resources.ts). */
export type { ResourceContents, ResourceEntry, ResourceTemplateEntry } from './types.js';
export { listResources, PAGE_SIZE, RESOURCE_TEMPLATES } from './catalog.js';
export { readResource } from './read.js';
export { resourceListChangedBy, resourceUrisTouchedBy } from './changes.js';
export { READ_TOOLS } from './access.js';
