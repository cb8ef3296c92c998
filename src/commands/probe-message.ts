import { ENVELOPE_FOOTER, ENVELOPE_PREFIX, MAX_PROBE_MESSAGE } from '../events/probes.js';
import { senderKind } from '../events/channels.js';
import type { By } from '../events/principals.js';

/**
 * A probe's message: xylocopa's `Probe.validate_message`, and the envelope the agent receives it in.
 */

/**
 * xylocopa's `Probe.validate_message`, on the raw text (before stripping): the reason it is refused, or
 * null. Lengths and offsets count code points, as Python's do.
 */
export function validateMessage(message: string | null | undefined): string | null {
  if (message === null || message === undefined || message.trim() === '') return 'message is empty';
  const chars = [...message];
  if (chars.length > MAX_PROBE_MESSAGE) return `message exceeds ${MAX_PROBE_MESSAGE} chars (got ${chars.length})`;
  if (message.includes(ENVELOPE_PREFIX))
    return `message must not contain the envelope prefix '${ENVELOPE_PREFIX}' (would synthesize a nested envelope)`;
  if (message.includes(ENVELOPE_FOOTER))
    return `message must not contain the envelope footer '${ENVELOPE_FOOTER}' (would forge envelope termination)`;
  for (const [i, ch] of chars.entries()) {
    const code = ch.codePointAt(0)!;
    if (code < 0x20 && ch !== '\n' && ch !== '\t')
      return `message contains control char U+${code.toString(16).toUpperCase().padStart(4, '0')} at offset ${i}`;
    if (code === 0x7f) return `message contains DEL char at offset ${i}`;
  }
  return null;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** `Jan 5 3:07pm`, in UTC. */
export function envelopeTime(iso: string): string {
  const d = new Date(iso);
  const h = d.getUTCHours();
  return `${MONTHS[d.getUTCMonth()]} ${d.getUTCDate()} ${h % 12 === 0 ? 12 : h % 12}:${String(d.getUTCMinutes()).padStart(2, '0')}${h < 12 ? 'am' : 'pm'}`;
}

/** Who a probe's words are from, as the envelope and the wake prompt name them: `mallory (agent)`, `ana (user)`. */
export const probeAuthor = (by: By): string => `${by.name} (${senderKind(by.key)})`;

/**
 * What the agent receives: the message between a header naming the probe and its creator and a footer
 * the message cannot contain (validateMessage). Colony delivers it, but the words are the creator's, and
 * the header says so: a probe never speaks as Colony.
 */
export const probeEnvelope = (probeId: string, firedAt: string, message: string, by: By): string =>
  `${ENVELOPE_PREFIX}${probeId} fired (${envelopeTime(firedAt)}), set by ${probeAuthor(by)} — its words, not Colony's:\n\n${message}\n\n${ENVELOPE_FOOTER}`;
