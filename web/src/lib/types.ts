/** Shapes the console reads (the REST API's, see src/http/api*.ts). */
export interface TaskNode {
  id: number; parent_task_id: number | null; title: string; billing_code: string; status: string; assignee: { id: number; name: string } | null;
  lease_expires_at: string | null; verifier_config: { kind: string; agent_id?: number; recipe?: string; cmd?: string } | null;
  budget_tokens: number | null; budget_dollars_cents: number | null; spent_tokens: number; spent_dollars_cents: number;
  rollup: { tokens: number; dollars_cents: number; task_count: number }; failure_reason: string | null;
  /** The start of what it handed in, its verdict (the rest: GET /api/tasks/:id). */
  summary?: string | null; verdict?: string | null; verified_by?: string | null; has_verifier_output?: boolean; artifact_count?: number;
  /** Rejected hand-ins of its current attempt (done only with evidence: each goes back to the assignee up to the goal's limit). */
  rejections?: number;
  /** The tasks of the goal it waits on, each with its status: claimable once every one is done. */
  blocked_by?: { id: number; status: string; done: boolean }[];
  /** `children` is empty when the task is folded (`?view=tree`); `child_count` is how many it has. */
  child_count: number; children: TaskNode[];
}
export interface GoalInfo {
  id: number; title: string; description: string; status: string; owner: string; channel: string; coordinator: string; approval_mode: string;
  /** Done only with evidence, and how many rejected hand-ins go back to the assignee (GET /api/goals/:id). */
  require_evidence: boolean; max_rejections: number;
  budget_tokens: number | null; budget_dollars_cents: number | null; spent_tokens: number; spent_dollars_cents: number; paused_reason: string | null;
  alert_80pct_posted: { tokens: boolean; dollars_cents: boolean }; completion_summary: string | null; pending_proposal_id: number | null; task_count: number;
  created_at: string; completed_at: string | null; updated_at: string;
}
export interface Snapshot {
  goal: GoalInfo; tasks_tree: TaskNode[]; tree_rows: number; spawned_agents: { id: number; name: string; role: string }[];
  recent_events: { id: number; from: string; from_kind: string; body: string; kind: string; event: string | null; created_at: string }[];
}
export interface Proposal {
  id: number; kind: 'tree' | 'agent'; goal_id: number; goal_title: string; proposer: string; created_at: string; status: string; task_count?: number;
  tree?: unknown; tree_omitted?: boolean; agent?: { name: string; model: string; tier: string; tool_scope: string[]; system_prompt: string; reason: string }; commands: string[]; reasoning?: string;
}
export interface TimelineMessage { id: number; from: string; from_kind: string; kind: string; event: string | null; body: string; created_at: string }
/** An authorization request waiting in the serving process (GET /api/oauth/requests); every string but `code` is the client's own. */
export interface PendingAuthorization {
  code: string; client_id: string; client_name: string; client_kind: 'dcr' | 'cimd'; redirect_host: string; scopes: string[]; created_at: string; expires_at: string;
}
export interface OAuthGrant {
  grant_id: number; as: string; scopes: string[]; issued_at: string; refreshed_at: string | null; refresh_count: number; access_expires_at: string;
  refresh_expires_at: string; status: 'active' | 'expired' | 'revoked'; revoked_at: string | null; revoke_reason: string | null;
}
/** An application granted access (GET /api/oauth/clients, as `colony oauth clients --json`). */
export interface OAuthClient {
  client_id: string; client_name: string; kind: 'dcr' | 'cimd'; registered_at: string; redirect_uris: string[]; status: 'active' | 'no live grant'; grants: OAuthGrant[];
}
export interface ResourceRequest {
  id: number; name: string; resource_type: string; reason: string; task_id: number; goal_id: number | null; requester: string; scope: string; created_at: string; status: string;
}
/** A goal that waits on the owner: paused, stuck, past 80 % of a budget, or a draft nobody plans. */
export interface GoalNeed {
  goal_id: number; title: string; kind: 'paused' | 'stuck' | 'budget_alert' | 'stalled'; status: string; reason: string; at: string;
  budget_tokens?: number | null; budget_dollars_cents?: number | null; spent_tokens?: number; spent_dollars_cents?: number;
}
export interface FailingAgent { agent: string; agent_id: number; failures: number; run_id: number; status: string; cause: string | null; reason: string | null; goal_id: number | null; task_id: number | null; at: string }
/** A task waiting on the owner: a leaf awaiting the owner's verdict, or failed at its goal's retry limit. */
export interface VerdictNeed {
  kind: 'verdict' | 'rejected'; task_id: number; title: string; goal_id: number; goal_title: string; assignee: string | null;
  summary: string | null; reason: string | null; verified_by: string | null; rejections: number; max_rejections: number | null; at: string;
}
/** An agent a loop breaker paused on a goal (null: its work outside goals); reason and evidence null when the caller may not read its runs. */
export interface BreakerNeed {
  agent: string; agent_id: number; goal_id: number | null; goal_title: string | null; breaker: string; reason: string | null;
  evidence: { run_ids: number[]; calls: { tool: string; args_digest: string; error_code: string; at: string }[]; task_ids: number[]; threshold: number } | null;
  tripped_at: string; lift: string;
}
/** What keeps this node from serving current data (a PostgreSQL node that cannot follow its store): as GET /health says it. */
/** follow: a PostgreSQL node cannot bring in other nodes' events; writes_stopped: the disk did not confirm a write. */
export interface NodeProblem { kind: 'follow' | 'writes_stopped'; reason: string; code: string; since: string; attempts: number }
export interface Attention {
  counts: { total: number; approvals: number; requests: number; goals: number; runs: number; quarantined: number; breakers: number; verdicts: number; oauth: number; node: number };
  proposals: Proposal[]; requests: ResourceRequest[]; goals: GoalNeed[]; failing_agents: FailingAgent[]; breakers: BreakerNeed[]; verdicts: VerdictNeed[];
  quarantined: { agent: string; agent_id: number; reason: string | null; at: string | null }[]; oauth_waiting: number;
  node: NodeProblem | null;
}
/** What a goal produced and who is on it now (GET /api/goals/:id/outcome). */
export interface GoalOutcome {
  artifacts: { message_id: number; channel: string; from: string; subject: string | null; body: string; truncated: boolean; at: string; task_ids: number[] }[];
  webapps: { app_id: string; url: string; kind: string; title: string; description: string; agent: string; presented_at: string; retired_at: string | null }[];
  working: { run_id: number; agent: string; task_id: number | null; started_at: string | null }[];
}
