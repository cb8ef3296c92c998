/**
 * The report's inline stylesheet: dark by default, light when the reader's system prefers it. System
 * fonts only — the file makes no request of any kind (its CSP says so too).
 */
export const REPORT_CSS = `
:root { color-scheme: dark light; --bg: #0f1216; --panel: #171b21; --line: #2a313b; --fg: #d8dee6; --dim: #8b96a5; --accent: #6cb6ff;
  --ok: #3fb950; --bad: #f85149; --warn: #d29922; --run: #58a6ff; --wait: #a371f7; --idle: #6e7681; }
@media (prefers-color-scheme: light) {
  :root { --bg: #ffffff; --panel: #f6f8fa; --line: #d0d7de; --fg: #1f2328; --dim: #57606a; --accent: #0969da;
    --ok: #1a7f37; --bad: #cf222e; --warn: #9a6700; --run: #0969da; --wait: #8250df; --idle: #6e7781; }
}
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg); font: 14px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; }
main { max-width: 1200px; margin: 0 auto; padding: 24px; }
h1 { font-size: 24px; margin: 0 0 4px; } h2 { font-size: 18px; margin: 32px 0 12px; border-bottom: 1px solid var(--line); padding-bottom: 6px; }
h3 { font-size: 15px; margin: 16px 0 8px; color: var(--dim); }
nav { display: flex; flex-wrap: wrap; gap: 12px; margin: 12px 0 0; } nav a { color: var(--accent); text-decoration: none; }
.dim { color: var(--dim); } code, pre, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12px; }
pre { white-space: pre-wrap; word-break: break-word; background: var(--panel); border: 1px solid var(--line); border-radius: 6px; padding: 10px; margin: 6px 0 0; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 4px 16px; background: var(--panel); border: 1px solid var(--line); border-radius: 8px; padding: 12px 16px; }
dl.facts dt { color: var(--dim); } dl.facts dd { margin: 0; }
.stats { display: flex; flex-wrap: wrap; gap: 10px; margin: 16px 0; }
.stat { background: var(--panel); border: 1px solid var(--line); border-radius: 8px; padding: 8px 14px; min-width: 110px; }
.stat b { display: block; font-size: 20px; } .stat span { color: var(--dim); font-size: 12px; }
table { width: 100%; border-collapse: collapse; background: var(--panel); border: 1px solid var(--line); border-radius: 8px; }
th, td { text-align: left; padding: 6px 10px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { color: var(--dim); font-weight: 600; font-size: 12px; } td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
tr:last-child td { border-bottom: 0; }
.badge { display: inline-block; padding: 0 8px; border-radius: 10px; font-size: 12px; font-weight: 600; border: 1px solid currentColor; white-space: nowrap; }
.st-done, .st-completed, .st-succeeded { color: var(--ok); }
.st-failed, .st-timeout, .st-timed_out, .st-cancelled, .st-refused, .st-stuck { color: var(--bad); }
.st-claimed, .st-in_progress, .st-running, .st-active { color: var(--run); }
.st-awaiting_verification, .st-queued, .st-paused { color: var(--warn); }
.st-proposed, .st-approved, .st-draft { color: var(--wait); } .st-unknown { color: var(--idle); }
ul.tree, ul.tree ul { list-style: none; margin: 0; padding-left: 22px; } ul.tree { padding-left: 0; }
ul.tree ul { border-left: 1px dashed var(--line); margin-left: 8px; }
.node { background: var(--panel); border: 1px solid var(--line); border-radius: 8px; padding: 8px 12px; margin: 6px 0; }
.node .title { font-weight: 600; } .node .meta { color: var(--dim); font-size: 12px; margin-top: 2px; }
.why { color: var(--bad); font-size: 12px; margin-top: 2px; }
.artifact { background: var(--panel); border: 1px solid var(--line); border-radius: 8px; padding: 10px 14px; margin: 10px 0; }
.empty { color: var(--dim); font-style: italic; }
`;
