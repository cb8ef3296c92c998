// The approval card's View (an MCP App). The server inlines this file after the ext-apps View runtime,
// which it binds as `ExtApps` (view-runtime.ts). The data arrives as review_proposal's tool result; the
// buttons decide through the host by calling Colony's `react` tool on the proposal's #approvals message.
// Nearly every string shown is agent-written and hostile: it only ever reaches the page as textContent,
// with control and bidi characters made visible, so nothing it holds is parsed or reorders what is read.
const { App, applyDocumentTheme, applyHostStyleVariables } = ExtApps;

const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
const visible = (value) =>
  String(value ?? '').replace(UNSAFE, (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'));
const $ = (id) => document.getElementById(id);
const put = (id, value) => {
  $(id).textContent = visible(value);
};
const node = (tag, className, value) => {
  const el = document.createElement(tag);
  if (className) el.className = className;
  if (value !== undefined) el.textContent = visible(value);
  return el;
};
const when = (iso) => (iso ? String(iso).replace('T', ' ').slice(0, 16) + ' UTC' : '');
const IDEMPOTENCY = 'colony/idempotency_key';

let card = null;
let busy = false;

const app = new App({ name: 'colony-approval-card', version: '1.0.0' }, {}, { autoResize: true });
app.ontoolresult = (result) => show(result);
app.onhostcontextchanged = (context) => theme(context);
app.onteardown = async () => ({});
$('approve').addEventListener('click', () => void decide('approve'));
$('reject').addEventListener('click', () => void decide('reject'));
await app.connect();
theme(app.getHostContext());

function theme(context) {
  if (context?.theme) applyDocumentTheme(context.theme);
  if (context?.styles?.variables) applyHostStyleVariables(context.styles.variables);
}

function errorText(result) {
  const e = result?.structuredContent?.error;
  if (e) return e.code + ': ' + e.message;
  return (
    (result?.content ?? [])
      .filter((c) => c.type === 'text')
      .map((c) => c.text)
      .join('\n') || 'the call failed'
  );
}

function show(result) {
  if (result.isError || !result.structuredContent?.proposal_id) {
    card = null;
    put('title', 'No proposal to review');
    put('subtitle', '');
    for (const id of ['commands-section', 'goal-section', 'why-section', 'tree-section', 'agent-section', 'decide'])
      $(id).hidden = true;
    say(errorText(result), 'error');
    return;
  }
  render(result.structuredContent);
  const c = result.structuredContent;
  if (c.status !== 'pending') say(decidedText(c), c.status);
  else $('outcome').hidden = true;
}

function render(c) {
  card = c;
  put(
    'title',
    'Proposal #' +
      c.proposal_id +
      (c.kind === 'tree'
        ? ' · task tree, ' + c.task_count + (c.task_count === 1 ? ' task' : ' tasks')
        : ' · new agent ' + (c.agent?.name ?? '')),
  );
  put('status', c.status);
  $('status').dataset.status = c.status;
  put('subtitle', 'In #approvals since ' + when(c.created_at));
  renderCommands(c.commands);
  put('goal', 'Goal #' + c.goal_id + ' — ' + c.goal_title);
  put('goal-description', c.goal_description);
  $('goal-section').hidden = false;
  put('proposer', c.proposer + ' (' + c.proposer_kind + ')');
  put('reasoning', c.reasoning || '(no reasoning given)');
  $('why-section').hidden = false;
  put('tree', c.tree_outline.join('\n'));
  $('tree-section').hidden = c.kind !== 'tree';
  renderAgent(c.agent);
  $('decide').hidden = false;
  buttons();
}

// First and in full: every command line approving this lets run on the host.
function renderCommands(commands) {
  const list = $('commands');
  list.replaceChildren(...commands.map((line) => node('pre', 'cmd', line)));
  put(
    'commands-hint',
    commands.length
      ? 'Exactly as they will run' +
          (card.kind === 'agent'
            ? ' (the backend the new agent inherits from its proposer).'
            : ' (your verifier recipes).')
      : 'None: approving this runs no command on this host.',
  );
  $('commands-section').classList.toggle('none', commands.length === 0);
  $('commands-section').hidden = false;
}

function renderAgent(agent) {
  const dl = $('agent');
  const rows = agent
    ? [
        ['Name', agent.name],
        ['Model', agent.model],
        ['Autonomy', agent.tier],
        ['Tools', agent.tool_scope.join(', ')],
        [
          'MCP servers',
          agent.mcp_servers.map((m) => m.name + ' ' + m.url + ' (' + m.transport + ')').join('\n') || 'none',
        ],
        ['Skills', agent.skills.join(', ') || 'none'],
        ['Subagents', agent.subagents.join(', ') || 'none'],
        ['For task', agent.parent_task_id === null ? '' : '#' + agent.parent_task_id],
        ['System prompt', agent.system_prompt],
      ]
    : [];
  dl.replaceChildren(
    ...rows.flatMap(([k, v]) => [node('dt', '', k), node('dd', k === 'System prompt' ? 'clip' : '', v)]),
  );
  $('agent-section').hidden = !agent;
}

function buttons() {
  const open = card?.status === 'pending' && !busy;
  $('approve').disabled = !open;
  $('reject').disabled = !open;
  $('reason').disabled = !open;
}

function say(text, kind) {
  const out = $('outcome');
  out.textContent = visible(text);
  out.dataset.kind = kind ?? 'info';
  out.hidden = false;
}

function decidedText(c) {
  const how = c.status === 'approved' ? 'Approved' : 'Rejected';
  return (
    how +
    ' by ' +
    (c.decided_by ?? '?') +
    (c.decided_at ? ' at ' + when(c.decided_at) : '') +
    (c.status === 'rejected' && c.reason ? ': ' + c.reason : '.')
  );
}

async function decide(decision) {
  if (!card || busy || card.status !== 'pending') return;
  const reason = $('reason').value.trim();
  if (decision === 'reject' && !reason) {
    say('Give a reason to reject: the proposer is told why.', 'error');
    $('reason').focus();
    return;
  }
  busy = true;
  buttons();
  say(decision === 'approve' ? 'Approving…' : 'Rejecting…');
  try {
    // Re-read first: a proposal decided elsewhere meanwhile is shown as decided, and `react` (a toggle) is not sent.
    const fresh = await app.callServerTool({ name: 'review_proposal', arguments: { proposal_id: card.proposal_id } });
    if (fresh.isError) throw new Error(errorText(fresh));
    render(fresh.structuredContent);
    if (card.status !== 'pending') return say(decidedText(card), card.status);
    const args = {
      message_id: card.message_id,
      reaction: decision,
      ...(reason ? { metadata: JSON.stringify({ reason }) } : {}),
    };
    // The key makes a host's retry of this click answer with the first decision instead of toggling the reaction off.
    const r = await app.callServerTool({
      name: 'react',
      arguments: args,
      _meta: { [IDEMPOTENCY]: 'approval-card:' + card.proposal_id + ':' + decision },
    });
    if (r.isError) throw new Error(errorText(r));
    const after = await app.callServerTool({ name: 'review_proposal', arguments: { proposal_id: card.proposal_id } });
    if (!after.isError) render(after.structuredContent);
    const d = r.structuredContent?.decision;
    if (d) say(d.summary, d.status);
    else if (card.status !== 'pending') say(decidedText(card), card.status);
    else say('The reaction was recorded but decided nothing; reload the card.', 'error');
  } catch (e) {
    say(e instanceof Error ? e.message : String(e), 'error');
  } finally {
    busy = false;
    buttons();
  }
}
