/** The probe decider parses probe_update's time itself (commands/iso-time.ts); re-exported for its callers. */
export { parseIsoTimestamp, pyRepr } from '../../commands/iso-time.js';
