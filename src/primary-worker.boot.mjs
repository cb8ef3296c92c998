// The primary worker's entry: a worker thread does not inherit the parent's `--import tsx`, so it
// registers tsx itself (as bin/colony.js does) before loading the TypeScript worker.
import { register } from 'tsx/esm/api';

register();
await import('./primary-worker.ts');
