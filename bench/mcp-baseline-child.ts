/**
 * One SDK baseline server in a process of its own, for the figures measured from outside
 * (bench/mcp-ext.ts): `node --import tsx bench/mcp-baseline-child.ts v1|v2`. v1 is the SDK v1 minimal
 * stateful server (bench/mcp-baseline-http.ts), v2 the SDK v2 minimal stateless one
 * (bench/mcp-baseline-v2.ts). Prints `listening URL` on stdout once it accepts connections; exits on
 * SIGTERM, or when its parent goes away (stdin ends), so a crashed bench leaves no server behind.
 */
import { baselineHttp } from './mcp-baseline-http.js';
import { statelessBaselineHttp } from './mcp-baseline-v2.js';

const kind = process.argv[2];
if (kind !== 'v1' && kind !== 'v2') throw new Error('usage: node --import tsx bench/mcp-baseline-child.ts v1|v2');
const endpoint = kind === 'v1' ? await baselineHttp() : await statelessBaselineHttp();
process.stdout.write(`listening ${endpoint.url}\n`);
const stop = () => void endpoint.close().finally(() => process.exit(0));
process.once('SIGTERM', stop);
process.stdin.once('end', stop);
process.stdin.resume();
