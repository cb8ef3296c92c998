import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomBytes } from 'node:crypto';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';

/** The request body as text; clients may compress it (node:zlib knows gzip, deflate and br, not zstd). */
export async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks);
  const encoding = String(req.headers['content-encoding'] ?? '').toLowerCase();
  if (encoding === 'gzip') return gunzipSync(raw).toString('utf8');
  if (encoding === 'deflate') return inflateSync(raw).toString('utf8');
  if (encoding === 'br') return brotliDecompressSync(raw).toString('utf8');
  if (encoding && encoding !== 'identity') throw new Error(`model endpoint cannot read content-encoding ${encoding}`);
  return raw.toString('utf8');
}

export function parseJson(text: string): unknown {
  if (!text) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  const headers: Record<string, string | number> = {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
  };
  // The Anthropic and OpenAI SDKs obey this header: a scripted error fails the run now instead of after the
  // client's back-off (Claude Code otherwise retries even a 401 ten times, over minutes).
  if (status >= 400) headers['x-should-retry'] = 'false';
  res.writeHead(status, headers);
  res.end(text);
}

/** Server-Sent Events as the model APIs send them: `event:` names the type where the API uses one. */
export class SseWriter {
  constructor(private readonly res: ServerResponse) {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  }

  event(name: string | undefined, data: unknown): void {
    const payload = typeof data === 'string' ? data : JSON.stringify(data);
    this.res.write(`${name ? `event: ${name}\n` : ''}data: ${payload}\n\n`);
  }

  end(): void {
    this.res.end();
  }
}

export function newId(prefix: string): string {
  return `${prefix}${randomBytes(12).toString('hex')}`;
}

/** A plain object, or an empty one: request bodies are untrusted JSON and read field by field. */
export function asRecord(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

export function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

export function asString(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/** Tool arguments arrive as a JSON string (OpenAI) or an object (Anthropic); a bad string becomes {raw}. */
export function parseArguments(value: unknown): Record<string, unknown> {
  if (typeof value !== 'string') return asRecord(value);
  if (!value.trim()) return {};
  try {
    return asRecord(JSON.parse(value));
  } catch {
    return { raw: value };
  }
}

/** Text of a content value that is a string or a list of typed parts (text / input_text / output_text). */
export function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  const parts = asArray(content).map((part) => {
    const p = asRecord(part);
    if (typeof p.text === 'string') return p.text;
    return p.type === undefined && part !== undefined ? JSON.stringify(part) : '';
  });
  return parts.filter((t) => t !== '').join('\n');
}
