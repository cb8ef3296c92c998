import type { NetworkMode } from '../events/sandbox.js';
import { GATE_SOCKET } from './network-gate.js';
import { SANDBOX_HOME, SANDBOX_SOCKETS } from './sandbox.js';

/** What a confined process finds inside: its gate on the sandbox's loopback, and its environment. */

/** Inside the sandbox, 127.0.0.1:7070 is the run's gate: COLONY_URL and, for `allow`, HTTPS_PROXY. */
const GATE_PORT = 7070;

/** Inside an empty network namespace: put the run's gate (Colony's MCP, and the allow-list proxy) on 127.0.0.1, wait until it listens, then run. */
export function gateScript(): string {
  const port = GATE_PORT.toString(16).toUpperCase().padStart(4, '0');
  return [
    `socat TCP-LISTEN:${GATE_PORT},bind=127.0.0.1,fork,reuseaddr UNIX-CONNECT:${SANDBOX_SOCKETS}/${GATE_SOCKET} 2>/dev/null &`,
    // Ready when the kernel lists the listener (shell builtins only: a probe connection would cost a process per try).
    `n=0; until [ $n -ge 200000 ]; do while read -r _ a _ s _; do [ "$a $s" = "0100007F:${port} 0A" ] && break 2; done < /proc/net/tcp; n=$((n+1)); done`,
    'exec /bin/sh -c "$1"',
  ].join('\n');
}

/** The environment inside: HOME and TMPDIR of the sandbox; Colony's MCP on the sandbox's loopback; the proxy for everything else. */
export function insideEnv(env: NodeJS.ProcessEnv, network: NetworkMode): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = { ...env, HOME: SANDBOX_HOME, TMPDIR: '/tmp' };
  if (network === 'host') return out;
  if (env.COLONY_URL) out.COLONY_URL = `http://127.0.0.1:${GATE_PORT}/mcp`;
  if (network === 'allow') {
    const proxy = `http://127.0.0.1:${GATE_PORT}`;
    Object.assign(out, {
      HTTPS_PROXY: proxy,
      HTTP_PROXY: proxy,
      https_proxy: proxy,
      http_proxy: proxy,
      ALL_PROXY: proxy,
      NO_PROXY: '127.0.0.1,localhost',
      no_proxy: '127.0.0.1,localhost',
    });
  }
  return out;
}
