/** Shapes the console reads (the REST API's, see src/http/api*.ts). */
export interface TaskNode {
  id: number; parent_task_id: number | null; title: string; billing_code: string; status: string; assignee: { id: number; name: string } | null;
  lease_expires_at: string | null; verifier_config: { kind: string; agent_id?: number; recipe?: string; cmd?: string } | null;
  budget_tokens: number | null; budget_dollars_cents: number | null; spent_tokens: number; spent_dollars_cents: number;
  rollup: { tokens: number; dollars_cents: number; task_count: number }; failure_reason: string | null;
  /** `children` is empty when the task is folded (`?view=tree`); `child_count` is how many it has. */
  child_count: number; children: TaskNode[];
}
export interface GoalInfo {
  id: number; title: string; description: string; status: string; owner: string; channel: string; coordinator: string; approval_mode: string;
  budget_tokens: number | null; budget_dollars_cents: number | null; spent_tokens: number; spent_dollars_cents: number; paused_reason: string | null;
  alert_80pct_posted: { tokens: boolean; dollars_cents: boolean }; completion_summary: string | null; pending_proposal_id: number | null; task_count: number;
}
export interface Snapshot {
  goal: GoalInfo; tasks_tree: TaskNode[]; tree_rows: number; spawned_agents: { id: number; name: string; role: string }[];
  recent_events: { id: number; from: string; from_kind: string; body: string; kind: string; event: string | null; created_at: string }[];
}
export interface Proposal {
  id: number; kind: 'tree' | 'agent'; goal_id: number; goal_title: string; proposer: string; created_at: string; status: string; task_count?: number;
  tree?: unknown; agent?: { name: string; model: string; tier: string; tool_scope: string[]; system_prompt: string; reason: string }; commands: string[]; reasoning?: string;
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
