/**
 * Agent-written text (goal and task titles, names, reasons, message bodies) is hostile wherever the CLI
 * shows it: ESC sequences can erase lines, retitle the window or fake output; C1 controls (U+009B is CSI)
 * do the same on terminals that honour them; bidi controls reorder what the owner reads. Every such
 * character is printed as a visible `\uXXXX` escape. That form is also a JSON string escape, so NDJSON
 * passed through here stays valid and parses back to the same value (JSON.stringify escapes C0 itself,
 * but not C1 or bidi). This module is loaded by `colony --help`: no imports.
 */

/** C0 but \t and \n, DEL, C1, and the bidi controls (embeddings, overrides, isolates, marks). */
const UNSAFE = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
/** The same plus \t, \n and the Unicode line and paragraph separators: a field in one line can't start another. */
const UNSAFE_IN_LINE = /[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

const escape = (ch: string): string => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`;

/** Text safe to write to a terminal; newlines and tabs kept (multi-line output, JSON). */
export const terminalSafe = (text: string): string => text.replace(UNSAFE, escape);

/** A field printed inside one line of output (a title in a table row): nothing in it can break the line. */
export const oneLine = (text: string): string => text.replace(UNSAFE_IN_LINE, escape);

/**
 * Characters nobody sees: C0 and C1 controls, Unicode format characters (bidi embeddings, overrides,
 * isolates and marks, which reorder what the owner reads; zero-width spaces and joiners, invisible
 * operators, the BOM, tag characters), and line and paragraph separators. A name a person must recognise
 * (an OAuth client's) may hold none of them.
 */
export const HIDDEN_CHAR = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u;
const HIDDEN_ALL = new RegExp(HIDDEN_CHAR.source, 'gu');
const codeUnits = (ch: string): string =>
  Array.from({ length: ch.length }, (_, i) => `\\u${ch.charCodeAt(i).toString(16).padStart(4, '0')}`).join('');

/** Every hidden character (HIDDEN_CHAR) as a visible `\uXXXX` escape, newlines and tabs included. */
export const allVisible = (text: string): string => text.replace(HIDDEN_ALL, codeUnits);

type Callback = (error?: Error | null) => void;
const guarded = new WeakSet<object>();

/**
 * Passes everything later written to `stream` (process.stdout) through terminalSafe, so no printer can
 * forget it. Bytes are decoded as the terminal would read them (UTF-8) before they are checked; a raw
 * 8-bit byte that is not UTF-8 becomes U+FFFD instead of reaching the terminal as a C1 control.
 */
export function guardOutput(stream: Pick<NodeJS.WritableStream, 'write'> = process.stdout): void {
  if (guarded.has(stream)) return;
  guarded.add(stream);
  const write = stream.write.bind(stream) as (chunk: string, encoding: BufferEncoding, cb?: Callback) => boolean;
  stream.write = ((chunk: string | Uint8Array, encoding?: BufferEncoding | Callback, cb?: Callback): boolean => {
    if (typeof encoding === 'function') [cb, encoding] = [encoding, undefined];
    const text =
      typeof chunk === 'string' && (encoding === undefined || /^utf-?8$/i.test(encoding))
        ? chunk
        : (typeof chunk === 'string'
            ? Buffer.from(chunk, encoding)
            : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)
          ).toString('utf8');
    return write(terminalSafe(text), 'utf8', cb);
  }) as typeof stream.write;
}
