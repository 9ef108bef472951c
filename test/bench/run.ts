// `npm run bench`: runs every benchmark in test/bench (each module exports `run()` returning its
// figures) and prints them. Pass names to run only some: `npm run bench -- translate webhook`.
import * as fs from 'fs';
import * as path from 'path';

type Bench = { run: () => Promise<Record<string, number | string>> };

async function main(): Promise<void> {
  const only = process.argv.slice(2);
  const names = fs.readdirSync(__dirname)
    .filter((f) => f.endsWith('.ts') && f !== 'run.ts')
    .map((f) => f.replace(/\.ts$/, ''))
    .filter((name) => only.length === 0 || only.includes(name))
    .sort();
  if (names.length === 0) throw new Error(`no benchmark matches ${only.join(', ')}`);
  let failed = 0;
  for (const name of names) {
    const started = Date.now();
    console.log(`\n== ${name}`);
    try {
      // require, not import(): under nodenext a dynamic import stays native ESM and cannot load .ts.
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const bench = require(path.join(__dirname, name)) as Bench;
      const figures = await bench.run();
      for (const [key, value] of Object.entries(figures)) {
        console.log(`  ${key}: ${typeof value === 'number' ? Number(value.toPrecision(4)) : value}`);
      }
    } catch (err) {
      failed++;
      console.error(`  FAILED: ${(err as Error).stack ?? err}`);
    }
    console.log(`  (${((Date.now() - started) / 1000).toFixed(1)} s)`);
  }
  if (failed > 0) process.exit(1);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
