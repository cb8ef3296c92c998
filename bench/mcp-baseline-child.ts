/**
 * One SDK baseline server in a process of its own, for the figures measured from outside
 * (bench/mcp-ext.ts): `node --import tsx bench/mcp-baseline-child.ts v1|v1json|v2`. v1 is the SDK v1 minimal
 * stateful server (bench/mcp-baseline-http.ts), v1json its stateless JSON-mode twin, v2 the SDK v2 minimal stateless one
 * (bench/mcp-baseline-v2.ts). Prints `listening URL` on stdout once it accepts connections; exits on
 * SIGTERM, or when its parent goes away (stdin ends), so a crashed bench leaves no server behind.
 */
import { baselineHttp, statelessJsonBaselineHttp } from './mcp-baseline-http.js';
import { statelessBaselineHttp } from './mcp-baseline-v2.js';

const kind = process.argv[2];
const SERVERS = {
  v1: () => baselineHttp(),
  v1session: () => baselineHttp(true),
  v1json: statelessJsonBaselineHttp,
  v2: statelessBaselineHttp,
};
if (!kind || !(kind in SERVERS)) throw new Error('usage: node --import tsx bench/mcp-baseline-child.ts v1|v1json|v2');
const endpoint = await SERVERS[kind as keyof typeof SERVERS]();
process.stdout.write(`listening ${endpoint.url}\n`);
const stop = () => void endpoint.close().finally(() => process.exit(0));
process.once('SIGTERM', stop);
process.stdin.once('end', stop);
process.stdin.resume();
