import type { Job, Load } from './mcp-ext-load.js';
import { figure, median, PAYLOAD_TEXT, type Figure } from './util.js';

/**
 * The write half of bench/mcp-ext.ts: tools/call `send_message` on a 2025-11-25 session of its own, driven
 * from outside by the same autocannon child and 10 connections, into one public channel of the owner —
 * `#requests`, a fixed channel that the first message creates (no tool creates public channels; `colony
 * init` makes none). Each call appends one message (one command, one durable transaction), so the channel
 * grows all through the run: its size before and after the measured rounds goes in the figures' `data`,
 * and the last round's rate against the first one's says whether the cost grew with it.
 */
export type Target = Pick<Job, 'url' | 'headers' | 'body' | 'idReplacement'>;
export type Checked = Target & Pick<Job, 'mustContain' | 'mustNotContain'>;

const CHANNEL = 'requests';
/** Any answer carrying one of these is a failure, whatever else it says. */
export const FAILED = ['"isError":true', '"error":'];

/** One JSON-RPC request on `target`'s session, its answer parsed (plain JSON or the last SSE event). */
export async function rpc(
  target: Target,
  body: string,
): Promise<{
  status: number;
  text: string;
  json: { result?: Record<string, unknown> & { isError?: boolean; structuredContent?: Record<string, unknown> } };
}> {
  const res = await fetch(target.url, { method: 'POST', headers: target.headers, body });
  const text = await res.text();
  const data = res.headers.get('content-type')?.startsWith('text/event-stream')
    ? text
        .split('\n')
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).trim())
        .at(-1)
    : text;
  return { status: res.status, text, json: data ? JSON.parse(data) : {} };
}

const toolCall = (id: string, name: string, args: Record<string, unknown>): string =>
  JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });

/**
 * The send_message load on `session`: one message sent by name first (it creates #requests and gives its
 * id), then every call of the load names that channel by id. Each answer must be a sent message of that
 * channel — a refusal, however fast, fails the run.
 */
export async function sendMessageTarget(session: Target): Promise<{ target: Checked; channelId: number }> {
  const first = await rpc(session, toolCall('create', 'send_message', { channel: CHANNEL, body: PAYLOAD_TEXT }));
  const sent = first.json.result?.structuredContent as { channel_id?: number; status?: string } | undefined;
  if (
    first.status !== 200 ||
    first.json.result?.isError ||
    sent?.status !== 'sent' ||
    typeof sent.channel_id !== 'number'
  ) {
    throw new Error(`send_message to #${CHANNEL}: ${first.status} ${first.text.slice(0, 300)}`);
  }
  const channelId = sent.channel_id;
  // `[<id>]` becomes a unique JSON-RPC id per request (autocannon's idReplacement); the body is a typical small message.
  const body = toolCall('[<id>]', 'send_message', { channel_id: channelId, body: PAYLOAD_TEXT });
  const mustContain = ['"structuredContent"', `"channel_id":${channelId},`, '"status":"sent"'];
  return { target: { ...session, body, idReplacement: true, mustContain, mustNotContain: FAILED }, channelId };
}

/**
 * The same load on the 2026-07-28 revision, no session: every request is the one a pinned SDK v2 client
 * sent for whoami (`modern`, bench/mcp-envelope.ts) with the tool and its arguments swapped — in the body
 * and in the `Mcp-Name` header the revision requires to agree with it — into the channel by id.
 */
export function statelessSendTarget(modern: Target, channelId: number): Checked {
  const call = JSON.parse(modern.body) as { params: { name: string; arguments: Record<string, unknown> } };
  if (call.params.name !== 'whoami' || modern.headers['mcp-name'] !== 'whoami')
    throw new Error(`the captured 2026-07-28 call is not whoami's: ${modern.body.slice(0, 300)}`);
  call.params.name = 'send_message';
  call.params.arguments = { channel_id: channelId, body: PAYLOAD_TEXT };
  return {
    ...modern,
    headers: { ...modern.headers, 'mcp-name': 'send_message' },
    body: JSON.stringify(call),
    mustContain: ['"structuredContent"', `"channel_id":${channelId},`, '"status":"sent"'],
    mustNotContain: FAILED,
  };
}

/** The channel's message count as list_channels reports it. */
export async function channelSize(session: Target, channelId: number): Promise<number> {
  const answer = await rpc(session, toolCall('size', 'list_channels', {}));
  const channels = (
    answer.json.result?.structuredContent as { channels?: { channel_id: number; message_count: number }[] } | undefined
  )?.channels;
  const channel = channels?.find((c) => c.channel_id === channelId);
  if (answer.status !== 200 || !channel)
    throw new Error(`list_channels: ${answer.status} ${answer.text.slice(0, 300)}`);
  return channel.message_count;
}

/**
 * send_message against whoami on the same `colony serve` and revision (rounds alternated with it), and the
 * last measured round against the first: ~1 means a call cost no more once the channel had grown.
 * `sizes`: the channel's message count before each measured send_message round, then after the last.
 */
export function sendMessageFigures(
  send: Load[],
  whoami: Load[],
  stateless: { send: Load[]; whoami: Load[] },
  sizes: number[],
  data: string,
): Record<string, Figure> {
  const rate = (loads: Load[]) => median(loads.map((l) => l.callsPerS));
  const p99 = (loads: Load[]) => median(loads.map((l) => l.p99Ms));
  const count = (n: number) => n.toLocaleString('en-US');
  const grown = `${data}; #${CHANNEL}: ${count(sizes[0]!)} messages before the measured rounds, ${count(sizes.at(-1)!)} after`;
  const rounds = send.map((l, i) => `${Math.round(l.callsPerS)}/s at ${count(sizes[i]!)}`).join(', ');
  return {
    mcp_http_ext_send_message_per_s: { ...figure(rate(send), 'calls/s', rate(whoami)), data: grown },
    mcp_http_ext_send_message_p99_ms: { ...figure(p99(send), 'ms', p99(whoami)), data: grown },
    // The issue's own setting: no session, one JSON answer per request, against Colony's stateless whoami.
    mcp_http_ext_send_message_per_s_stateless: {
      ...figure(rate(stateless.send), 'calls/s', rate(stateless.whoami)),
      data: `${data}; into the same channel`,
    },
    mcp_http_ext_send_message_late_per_s: {
      ...figure(send.at(-1)!.callsPerS, 'calls/s', send[0]!.callsPerS),
      data: `each round's rate at the channel's size when it began: ${rounds}`,
    },
  };
}
