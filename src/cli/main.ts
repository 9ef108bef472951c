#!/usr/bin/env node
// `nls`: the command line. Each command lives in its own module and is loaded only when used,
// so `nls keys` does not load the chart generator and vice versa.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { version } from '../version';
import { terminalSafe } from './output';

interface Command {
  readonly summary: string;
  /** Module beside this file and the function it exports: `(args) => Promise<number>`. */
  readonly module: string;
  readonly entry: string;
}

// Commands implemented elsewhere in src/cli/ register here with one line each.
export const commands: Record<string, Command> = {
  keys: { summary: 'mint, list or revoke API keys of a model; read the key audit log', module: './keys/keys', entry: 'runKeys' },
  usage: { summary: 'tokens per key owner and model, from the Prometheus that scrapes the gateway', module: './usage/usage', entry: 'runUsage' },
  crds: { summary: 'apply the CRDs server-side and wait until Established', module: './lifecycle/crds', entry: 'runCrds' },
  preflight: { summary: 'before an upgrade: stored objects this release refuses, gateway stack versions', module: './lifecycle/preflight', entry: 'runPreflight' },
  upgrade: { summary: 'guarded upgrade of an installation', module: './lifecycle/upgrade', entry: 'runUpgrade' },
  rollback: { summary: 'roll an installation back', module: './lifecycle/rollback', entry: 'runRollback' },
  verify: { summary: 'check an installation', module: './lifecycle/verify', entry: 'runVerify' },
  smoke: { summary: 'call every model through the gateway with real credentials (/v1/models, one-token chat)', module: './gateway/smoke', entry: 'runSmoke' },
  storage: { summary: 'rewrite the stored objects of a CRD in its storage version', module: './lifecycle/storage', entry: 'runStorage' },
  build: { summary: 'render a custom build (values.yaml, models.yaml) for a GitOps repository', module: './builds/build', entry: 'runBuild' },
  validate: { summary: 'admit manifests offline as the cluster would (CI of GitOps repositories)', module: './builds/validate', entry: 'runValidate' },
  gateway: { summary: 'inventory, migrate or roll the shared Gateways (AI Gateway upgrade steps)', module: './gateway/gateway', entry: 'runGateway' },
  'wait-webhooks': { summary: 'wait until the API server reaches the admission webhooks', module: './lifecycle/wait-webhooks', entry: 'runWaitWebhooks' },
};

export function usage(): string {
  const lines = [`nls ${version} — nebari-llm-serving command line`, '', 'Usage: nls <command> [arguments]', '', 'Commands:'];
  for (const [name, c] of Object.entries(commands)) if (available(c)) lines.push(`  ${name.padEnd(14)} ${c.summary}`);
  lines.push('  version        print the version', '', 'Run `nls <command> --help` for a command\'s arguments.');
  return lines.join('\n');
}

function available(c: Command): boolean {
  const base = path.join(__dirname, c.module);
  return fs.existsSync(base + '.ts') || fs.existsSync(base + '.js');
}

/** Dispatch `argv` (without node and script); returns the exit code. */
export async function main(argv: string[]): Promise<number> {
  const [name, ...args] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(usage() + '\n');
    return name ? 0 : 2;
  }
  if (name === 'version' || name === '--version') {
    process.stdout.write(version + '\n');
    return 0;
  }
  const command = commands[name];
  if (!command || !available(command)) {
    process.stderr.write(`error: unknown command "${name}"\n\n${usage()}\n`);
    return 2;
  }
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const mod = require(command.module) as Record<string, (args: string[]) => Promise<number>>;
  const run = mod[command.entry];
  if (typeof run !== 'function') {
    process.stderr.write(`error: command "${name}" is not available in this build (${command.module} has no ${command.entry})\n`);
    return 2;
  }
  if (args.includes('--help') || args.includes('-h')) {
    const help = (mod as Record<string, unknown>)[`${name.replace(/-(\w)/g, (_, c: string) => c.toUpperCase())}Usage`];
    if (typeof help === 'string') {
      process.stdout.write(help + '\n');
      return 0;
    }
  }
  return run(args);
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err: Error) => {
      // Messages can quote cluster data (owners, descriptions): no control characters reach the terminal.
      process.stderr.write(`error: ${err.message.split('\n').map(terminalSafe).join('\n')}\n`);
      // Bad arguments exit 2 in every command (UsageError, src/cli/phases.ts); anything else 1.
      process.exit(err.name === 'UsageError' ? 2 : 1);
    },
  );
}
