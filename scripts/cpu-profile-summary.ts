// Prints where a V8 CPU profile (`node --cpu-prof`) spent its busy time: self time per function
// and per source file, the top entries, as percentages of the samples that were not idle. With
// --after-first-request, samples before the first one in Node's HTTP server are left out (a
// server's start-up, e.g. ts-node compiling, is not its request path).
//   npx ts-node --transpile-only scripts/cpu-profile-summary.ts <file.cpuprofile> [top] [--after-first-request]
import * as fs from 'fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

function main(): void {
  const args = process.argv.slice(2);
  const afterFirstRequest = args.includes('--after-first-request');
  const [file, topArg] = args.filter((a) => !a.startsWith('--'));
  if (!file) throw new Error('usage: cpu-profile-summary.ts <file.cpuprofile> [top]');
  const top = Number(topArg ?? 25);
  const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as { nodes: ProfileNode[]; samples: number[] };
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const byFunction = new Map<string, number>();
  const byFile = new Map<string, number>();
  const first = afterFirstRequest ? Math.max(0, profile.samples.findIndex((id) => byId.get(id)!.callFrame.url.includes('_http_server'))) : 0;
  let total = 0;
  for (const id of profile.samples.slice(first)) {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    if (functionName === '(idle)') continue;
    total++;
    const where = url.replace(/^.*\/(node_modules\/|src\/|test\/)/, '$1') || '(native)';
    const fn = `${functionName || '(anonymous)'} ${where}:${lineNumber + 1}`;
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + 1);
    byFile.set(where, (byFile.get(where) ?? 0) + 1);
  }
  for (const [title, map] of [['self time by function', byFunction], ['self time by file', byFile]] as const) {
    console.log(`\n${title} (${total} busy samples)`);
    for (const [name, n] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${((100 * n) / total).toFixed(1).padStart(5)}%  ${name}`);
  }
}

main();
