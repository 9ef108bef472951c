// Prints where a V8 CPU profile (`node --cpu-prof`) spent its time: self time per function and
// per source file, the top entries, as percentages of all samples.
//   npx ts-node --transpile-only scripts/cpu-profile-summary.ts <file.cpuprofile> [top]
import * as fs from 'fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

function main(): void {
  const [file, topArg] = process.argv.slice(2);
  if (!file) throw new Error('usage: cpu-profile-summary.ts <file.cpuprofile> [top]');
  const top = Number(topArg ?? 25);
  const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as { nodes: ProfileNode[]; samples: number[] };
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const byFunction = new Map<string, number>();
  const byFile = new Map<string, number>();
  for (const id of profile.samples) {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    const where = url.replace(/^.*\/(node_modules\/|src\/|test\/)/, '$1') || '(native)';
    const fn = `${functionName || '(anonymous)'} ${where}:${lineNumber + 1}`;
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + 1);
    byFile.set(where, (byFile.get(where) ?? 0) + 1);
  }
  const total = profile.samples.length;
  for (const [title, map] of [['self time by function', byFunction], ['self time by file', byFile]] as const) {
    console.log(`\n${title} (${total} samples)`);
    for (const [name, n] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${((100 * n) / total).toFixed(1).padStart(5)}%  ${name}`);
  }
}

main();
