import * as z from 'zod';
import { presentWebapp, tenantWebapps } from '../../actions/webapps.js';
import { getChannel } from '../../projections/channel-queries.js';
import { goalIdOfChannel } from '../../projections/goal-queries.js';
import { defineTool, type AnyTool } from '../tool.js';
import { answer } from './xylocopa.js';
import { listedText, Listed, Presented, presentedText, view } from './webapp-text.js';
import { speaker } from '../../events/principals.js';

/**
 * xylocopa's web app tools: webapp_present and webapp_list, scoped to
 * the caller's tenant. Colony serves static and port apps under `/apps/<app_id>/` (src/http/apps.ts).
 * `target` is not a path field of the path policy: it may be a port or a URL, and a static target is
 * held to something narrower than the allowed roots — the agent's own project directory.
 */
const common = { surface: 'agent', module: 'webapps' } as const;

const present = defineTool({
  ...common,
  name: 'webapp_present',
  title: 'Present a web app',
  trust: 'write',
  description:
    'Shows your owner something you built, as a card message that opens it — posted in the channel of the goal you are working on, else as a direct message to your owner — and registers it for your project (presenting the same project, kind and target again updates the registration: a non-empty title or description replaces the old one). Kinds (detected from target when kind is ""): "url" — an http(s) link; "port" — a web server you run on 127.0.0.1 at that port (1024-65535), reverse-proxied under /apps/<app_id>/ with the prefix stripped, until you are stopped — only while your network is host or your sandbox is off (in a network of your own, your servers are not on the host loopback: ErrPortNotAllowed); "static" — an .html file inside your project (a path relative to the project directory, or absolute), served sandboxed under /apps/<app_id>/ together with the files next to it. You need a project (your owner assigns it). An owner names the presenting agent with agent_id (its id or name). Refusals are text starting with "Error: ".',
  input: z.strictObject({
    target: z.string().max(2000).describe('An .html path in your project, a port number, or an http(s) URL'),
    title: z.string().max(200).default('').describe('Shown on the card; default: the target'),
    description: z.string().max(2000).default('').describe('One or two lines about it'),
    kind: z.string().max(20).default('').describe('static, port or url; "" detects it from target'),
    agent_id: z.string().max(200).default('').describe('The presenting agent (its id or name); "" for yourself'),
  }),
  output: Presented,
  handler: (ctx, a) =>
    answer(() => {
      const r = presentWebapp(
        ctx.app,
        speaker(ctx.caller),
        { target: a.target, title: a.title, description: a.description, kind: a.kind, agentId: a.agent_id },
        ctx.command,
      );
      const channel = getChannel(ctx.app.engine.db, r.channelId)!;
      return {
        status: 'ok' as const,
        outcome: r.outcome,
        message_id: r.messageId,
        app: view(r.app),
        posted_in: {
          channel_id: channel.channelId,
          channel: channel.name,
          goal: goalIdOfChannel(ctx.app.engine.db, channel.channelId) !== null,
        },
      };
    }),
  text: presentedText,
});

const list = defineTool({
  ...common,
  name: 'webapp_list',
  title: 'List web apps',
  trust: 'read',
  description:
    'Lists the web apps presented in a project, most recently presented first: title, kind, target, description, where it opens, when it was last presented. project "" means your own project (or, when you have none, every project of your team). A port app whose presenting agent was stopped is marked retired: it is no longer proxied until someone presents it again.',
  input: z.strictObject({
    project: z.string().max(1000).default('').describe('A project name; "" for your own project'),
  }),
  output: Listed,
  handler(ctx, a) {
    const r = tenantWebapps(ctx.app, speaker(ctx.caller), a.project);
    return { status: 'ok' as const, project: r.project, count: r.apps.length, apps: r.apps.map(view) };
  },
  text: listedText,
});

export const webappTools: readonly AnyTool[] = [present, list];
