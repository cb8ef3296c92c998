import type { Event } from '../engine/event.js';
import { type By } from './principals.js';

/**
 * Projects (xylocopa's): a named directory an owner's agents work in,
 * with a git remote (metadata only: nothing is cloned) and a description. Each project is its own
 * `project-<n>` stream (n from the `project` id sequence); users name it by `name`, unique per owner.
 * Archiving is a soft delete: the row stays, the name stays taken, and project_create re-activates it.
 *
 * Scaffolding CLAUDE.md / PROGRESS.md is not an event: those files are side effects rendered from the
 * project's data (anyone can re-render them at any time), not facts Colony holds — the MCP audit log
 * records each scaffold/regenerate call.
 */
export type ProjectCreated = Event<
  'ProjectCreated',
  {
    projectId: number;
    ownerId: number;
    name: string;
    /** Absolute, symlinks resolved — exactly what the path policy accepted. */
    path: string;
    gitRemote: string | null;
    description: string | null;
    by: By;
  }
>;

/** Back from the archive; `gitRemote` and `description` are the values after filling the empty ones. */
export type ProjectReactivated = Event<
  'ProjectReactivated',
  { projectId: number; gitRemote: string | null; description: string | null; by: By }
>;

export type ProjectArchived = Event<'ProjectArchived', { projectId: number; by: By }>;

export type ProjectEvent = ProjectCreated | ProjectReactivated | ProjectArchived;

export const projectStream = (n: number): string => `project-${n}`;

/** xylocopa's rule: a letter or digit first, then letters, digits, `.`, `_`, `-` (so never `.`-reserved, never a `/`). */
export const PROJECT_NAME = /^[a-zA-Z0-9][a-zA-Z0-9._-]*$/;
export const MAX_PROJECT_NAME = 100;
