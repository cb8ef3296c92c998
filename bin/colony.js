#!/usr/bin/env node
// Runs the TypeScript CLI directly through tsx, so `npx colony` works in a checkout without a build.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli.ts');
