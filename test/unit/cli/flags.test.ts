import { durationMs, goDuration, parseFlags } from '../../../src/cli/flags';
import { parseKeysArgs } from '../../../src/cli/keys/keys';
import { UsageError } from '../../../src/cli/phases';
import { runVerify } from '../../../src/cli/lifecycle/verify';
import { runWaitWebhooks } from '../../../src/cli/lifecycle/wait-webhooks';

const options = {
  chart: { type: 'string' },
  values: { type: 'string', short: 'f', multiple: true },
  'dry-run': { type: 'boolean' },
} as const;

describe('parseFlags', () => {
  test('reads --name value, --name=value, repeatable flags, aliases and switches', () => {
    const parsed = parseFlags('upgrade', ['--chart=oci://r/c', '-f', 'a.yaml', '--values', 'b.yaml', '-fc.yaml', '--dry-run'], options);
    expect(parsed.values).toEqual({ chart: 'oci://r/c', values: ['a.yaml', 'b.yaml', 'c.yaml'], 'dry-run': true });
    expect(parsed.positionals).toEqual([]);
  });

  test('a switch may be repeated; a value starting with "-" goes after "="; positionals after "--"', () => {
    const parsed = parseFlags('upgrade', ['--dry-run', '--dry-run', '--chart=-odd', 'extra', '--', '--chart'], options);
    expect(parsed.values).toEqual({ chart: '-odd', 'dry-run': true });
    expect(parsed.positionals).toEqual(['extra', '--chart']);
  });

  test.each([
    [['--chrat', 'x'], 'upgrade: unknown flag --chrat; see `nls upgrade --help`'],
    [['--chrat=x'], 'upgrade: unknown flag --chrat; see `nls upgrade --help`'],
    [['--chart', 'c', '-x'], 'upgrade: unknown flag -x; see `nls upgrade --help`'],
    [['--chart'], 'upgrade: --chart needs a value'],
    [['-f'], 'upgrade: --values needs a value'],
    [['--chart', '--dry-run'], 'upgrade: --chart needs a value (write --chart=VALUE for a value that starts with "-")'],
    [['--chart', 'a', '--chart', 'b'], 'upgrade: --chart given twice; give it once'],
    [['--chart=a', '--chart', 'a'], 'upgrade: --chart given twice; give it once'],
    [['--dry-run=yes'], 'upgrade: --dry-run takes no value'],
  ])('%j is refused: %s', (args, message) => {
    let error: unknown;
    try {
      parseFlags('upgrade', args, options);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message).toBe(message);
  });

  test('a command with no such flag exits 2 and says where the flags are', async () => {
    const lines: string[] = [];
    expect(await runVerify(['--output', 'json', '--relase', 'x'], (l) => lines.push(l))).toBe(2);
    expect(lines).toEqual(['error: verify: unknown flag --relase; see `nls verify --help`']);
  });

  test('nls keys parses with the same rules', () => {
    expect(parseKeysArgs(['revoke', '--model=m', '--client-id', 'c1', '--output', 'json'])).toMatchObject({ action: 'revoke', model: 'm', clientId: 'c1', output: 'json' });
    expect(() => parseKeysArgs(['mint', '--model', 'm', '--modle', 'n'])).toThrow('keys mint: unknown flag --modle; see `nls keys mint --help`');
    expect(() => parseKeysArgs(['mint', '--model'])).toThrow('keys mint: --model needs a value');
    expect(() => parseKeysArgs(['list', '--model', 'm', 'extra'])).toThrow('keys list: unexpected argument "extra"');
  });
});

describe('durations', () => {
  test.each([
    ['90', 90_000],
    ['300s', 300_000],
    ['5m', 300_000],
    ['250ms', 250],
    ['1h', 3_600_000],
    ['30d', 2_592_000_000],
    ['2w', 1_209_600_000],
  ])('%s is %i ms', (text, ms) => expect(durationMs('timeout', text)).toBe(ms));

  test('a bad duration names the flag and the format', () => {
    expect(() => durationMs('timeout', 'soon')).toThrow('--timeout "soon" is not a duration; write e.g. 300s or 5m');
  });

  test('helm gets whole seconds, at least one', () => {
    expect(goDuration(300_000)).toBe('300s');
    expect(goDuration(1)).toBe('1s');
  });
});

describe('conventional short flags', () => {
  test('-n is --namespace and -o is --output wherever a command has them, as in kubectl and helm', () => {
    const parsed = parseFlags('verify', ['-n', 'llm', '-o', 'json'], { namespace: { type: 'string' }, output: { type: 'string' } });
    expect(parsed.values).toEqual({ namespace: 'llm', output: 'json' });
    expect(() => parseFlags('crds apply', ['-o', 'json'], { namespace: { type: 'string' } })).toThrow('crds apply: unknown flag -o');
  });

  test('nls wait-webhooks -n NS (as docs/installation.md writes it) is the namespace, not an unknown flag', async () => {
    const out: string[] = [];
    // A bad --timeout stops before any connection: the parse got past -n.
    expect(await runWaitWebhooks(['-n', 'nebari-llm-serving-system', '--timeout', 'soon'], (l) => out.push(l))).toBe(2);
    expect(out.join('\n')).toContain('--timeout "soon" is not a duration');
  });

  test('nls keys takes -n, -o and --context', () => {
    expect(parseKeysArgs(['list', '--model', 'm', '-n', 'llm', '-o', 'json', '--context', 'prod'])).toMatchObject({ namespace: 'llm', output: 'json', context: 'prod' });
  });
});
