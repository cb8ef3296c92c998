import { productProjections } from './app.js';
import { servePrimary } from './engine/pg/primary-worker.js';

// The worker thread behind a node's PostgreSQL primary (engine/pg/primary.ts), with the product's read models.
servePrimary(productProjections);
