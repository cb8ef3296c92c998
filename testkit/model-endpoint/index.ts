import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { anthropicError, countTokens, parseAnthropic, writeAnthropic } from './anthropic.js';
import { parseChat, writeChat } from './chat.js';
import { asRecord, parseJson, readBody, sendJson } from './http.js';
import { openaiError, parseResponses, writeResponses } from './responses.js';
import type {
  ModelApi,
  ModelEndpoint,
  ModelEndpointOptions,
  ModelScript,
  RecordedRequest,
  ScriptReply,
  ScriptTurnInput,
} from './types.js';

export * from './types.js';
export { findTool, requireTool, sequence, isSideRequest, callToolThenFinish, SIDE_REPLY, type Step } from './script.js';

/**
 * A scripted model server for running the real agent CLIs offline: one loopback HTTP server speaks the
 * Anthropic Messages API (Claude Code), the OpenAI Responses API (Codex) and OpenAI Chat Completions
 * (OpenCode), and answers each agent turn with what the test's script says. Every request is recorded, the
 * ones it does not know too (answered 404 in the API's error shape, so a CLI fails loudly, not silently).
 */
export async function startModelEndpoint(
  script: ModelScript,
  options: ModelEndpointOptions = {},
): Promise<ModelEndpoint> {
  const requests: RecordedRequest[] = [];
  const models = options.models ?? ['scripted-model'];
  const server = createServer((req, res) => {
    handle(req, res, script, models, requests).catch((error: unknown) => {
      if (!res.headersSent) sendJson(res, 500, { error: { message: String(error), type: 'server_error' } });
      else res.end();
    });
  });
  // A CLI keeps its connections alive; close() must not wait for them.
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}

interface Route {
  api: ModelApi;
  parse(body: Record<string, unknown>): ScriptTurnInput;
  /** `body` is the parsed request, for what a reply must echo (Codex's tool namespaces). */
  write(res: ServerResponse, turn: ScriptTurnInput, reply: ScriptReply, body: Record<string, unknown>): void;
  error(res: ServerResponse, status: number, message: string): void;
}

const ROUTES: Record<string, Route> = {
  '/messages': { api: 'anthropic', parse: parseAnthropic, write: writeAnthropic, error: anthropicError },
  '/responses': { api: 'responses', parse: parseResponses, write: writeResponses, error: openaiError },
  '/chat/completions': { api: 'chat', parse: parseChat, write: writeChat, error: openaiError },
};

async function handle(
  req: IncomingMessage,
  res: ServerResponse,
  script: ModelScript,
  models: string[],
  requests: RecordedRequest[],
): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://endpoint');
  // Clients are configured with or without the /v1 prefix; both reach the same routes.
  const path = url.pathname.replace(/^\/v1(?=\/)/, '');
  const text = await readBody(req);
  const record: RecordedRequest = {
    method: req.method ?? 'GET',
    path: url.pathname,
    query: url.search,
    headers: credentials(req),
    body: parseJson(text),
  };
  requests.push(record);
  const route = req.method === 'POST' ? ROUTES[path] : undefined;
  if (route) {
    record.api = route.api;
    const body = asRecord(record.body);
    const turn = route.parse(body);
    let reply: ScriptReply;
    try {
      reply = await script(turn);
    } catch (error) {
      // A throwing script is the test's bug: the CLI sees a 500 in its API's shape, the test sees `error`.
      record.error = error instanceof Error ? error.message : String(error);
      reply = { error: { status: 500, message: `script failed: ${record.error}` } };
    }
    if (reply.error) {
      record.status = reply.error.status;
      route.error(res, reply.error.status, reply.error.message);
    } else {
      record.status = 200;
      route.write(res, turn, reply, body);
    }
    return;
  }
  record.status = answerOther(req, res, path, asRecord(record.body), models);
}

/** The small requests beside the model calls; returns the status answered. */
function answerOther(
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  body: Record<string, unknown>,
  models: string[],
): number {
  const anthropic = req.headers['anthropic-version'] !== undefined || req.headers['x-api-key'] !== undefined;
  if (req.method === 'POST' && path === '/messages/count_tokens') {
    countTokens(res, body);
    return 200;
  }
  if ((req.method === 'GET' || req.method === 'HEAD') && (path === '/' || path === '/api/hello')) {
    // Claude Code sends `HEAD /api/hello` at start-up as a reachability probe.
    sendJson(res, 200, {});
    return 200;
  }
  if (req.method === 'GET' && path === '/models') {
    // One list readable as OpenAI's ({object, data[].id}) and as Anthropic's ({data[].type, has_more}).
    const data = models.map((id) => ({ id, object: 'model', type: 'model', display_name: id, owned_by: 'scripted' }));
    sendJson(res, 200, { object: 'list', data, has_more: false, first_id: models[0], last_id: models.at(-1) });
    return 200;
  }
  const message = `scripted model endpoint: no route for ${req.method} ${path}`;
  if (anthropic) anthropicError(res, 404, message);
  else openaiError(res, 404, message);
  return 404;
}

function credentials(req: IncomingMessage): RecordedRequest['headers'] {
  const headers: RecordedRequest['headers'] = {};
  if (typeof req.headers.authorization === 'string') headers.authorization = req.headers.authorization;
  if (typeof req.headers['x-api-key'] === 'string') headers['x-api-key'] = req.headers['x-api-key'];
  return headers;
}
