// `nls gateway <subcommand>`: the upgrade steps on the shared Gateways that a machine can check or
// do (docs/upgrading.md). Each subcommand lives in its own module, loaded only when used. The group
// prints its own help (main.ts would print one text for every subcommand).

import { commandOutput } from '../output';

interface Subcommand {
  readonly summary: string;
  readonly module: string;
  readonly entry: string;
  readonly usage: string;
}

const subcommands: Record<string, Subcommand> = {
  inventory: { summary: 'every object on the pack\'s Gateways, legacy fields, missing finalizers; save and compare', module: './gateway-inventory', entry: 'runGatewayInventory', usage: 'gatewayInventoryUsage' },
  migrate: { summary: 'move legacy AI Gateway 0.5 fields (schema.version, filterConfig); dry run unless --apply', module: './gateway-migrate', entry: 'runGatewayMigrate', usage: 'gatewayMigrateUsage' },
  'roll-dataplane': { summary: 'roll the Envoy data plane through its EnvoyProxy and wait for the new pods', module: './gateway-roll-dataplane', entry: 'runGatewayRollDataplane', usage: 'gatewayRollDataplaneUsage' },
};

export const gatewaySubcommandsUsage = [
  'Usage: nls gateway <subcommand> [arguments]',
  '',
  'Subcommands:',
  ...Object.entries(subcommands).map(([name, s]) => `  ${name.padEnd(15)} ${s.summary}`),
  '',
  'Run `nls gateway <subcommand> --help` for its arguments.',
].join('\n');

/** `nls gateway …` as the dispatcher calls it; returns the exit code. */
export async function runGateway(args: string[], out: (line: string) => void = commandOutput): Promise<number> {
  const [name, ...rest] = args;
  if (!name || name === '--help' || name === '-h') {
    out(gatewaySubcommandsUsage);
    return name ? 0 : 2;
  }
  const sub = subcommands[name];
  if (!sub) {
    out(`error: gateway: unknown subcommand "${name}"\n${gatewaySubcommandsUsage}`);
    return 2;
  }
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const mod = require(sub.module) as Record<string, unknown>;
  if (rest.includes('--help') || rest.includes('-h')) {
    out(mod[sub.usage] as string);
    return 0;
  }
  return (mod[sub.entry] as (args: string[], out: (line: string) => void) => Promise<number>)(rest, out);
}
