import { durationMs, goDuration, parseFlags } from '../../../src/cli/flags';

const spec = { values: ['chart', 'values'], repeatable: ['values'], switches: ['dry-run'], aliases: { f: 'values' } };

describe('parseFlags', () => {
  test('reads --name value, --name=value, repeatable flags, aliases and switches', () => {
    const parsed = parseFlags('upgrade', ['--chart=oci://r/c', '-f', 'a.yaml', '--values', 'b.yaml', '--dry-run'], spec, 'usage');
    expect(parsed.values).toEqual({ chart: 'oci://r/c' });
    expect(parsed.lists).toEqual({ values: ['a.yaml', 'b.yaml'] });
    expect([...parsed.switches]).toEqual(['dry-run']);
  });

  test.each([
    [['--chrat', 'x'], 'upgrade: unknown flag --chrat'],
    [['--chart'], 'upgrade: --chart needs a value'],
    [['--chart', '--dry-run'], 'upgrade: --chart needs a value'],
    [['--chart', 'a', '--chart', 'b'], 'upgrade: --chart given twice; give it once'],
    [['--dry-run=yes'], 'upgrade: --dry-run takes no value'],
  ])('%j is refused: %s', (args, message) => {
    expect(() => parseFlags('upgrade', args, spec, 'usage')).toThrow(message);
  });
});

describe('durations', () => {
  test.each([
    ['90', 90_000],
    ['300s', 300_000],
    ['5m', 300_000],
    ['250ms', 250],
    ['1h', 3_600_000],
  ])('%s is %i ms', (text, ms) => expect(durationMs('timeout', text)).toBe(ms));

  test('a bad duration names the flag and the format', () => {
    expect(() => durationMs('timeout', 'soon')).toThrow('--timeout "soon" is not a duration; write e.g. 300s or 5m');
  });

  test('helm gets whole seconds, at least one', () => {
    expect(goDuration(300_000)).toBe('300s');
    expect(goDuration(1)).toBe('1s');
  });
});
