import { auditTable, keyLimitsInNamespace, keysTable, parseKeysArgs, terminalSafe, terminalSafeJson } from '../../../src/cli/keys/keys';
import { KubeApiError } from '../../../src/kube/rest';
import { MemoryKube } from '../api-keys/memory-kube';

describe('nls keys arguments', () => {
  test('mint takes an expiry as a duration or an ISO time, and a tier', () => {
    expect(parseKeysArgs(['mint', '--model', 'm', '--expires-in', '30d', '--tier', 'standard'])).toMatchObject({ action: 'mint', model: 'm', expiresInMs: 30 * 86_400_000, tier: 'standard' });
    expect(parseKeysArgs(['mint', '--model', 'm', '--expires-at', '2030-01-31T00:00:00Z']).expiresAt).toEqual(new Date('2030-01-31T00:00:00Z'));
    expect(parseKeysArgs(['mint', '--model', 'm', '--expires-at', '2030-01-31T10:00:00+02:00']).expiresAt).toEqual(new Date('2030-01-31T08:00:00Z'));
    expect(parseKeysArgs(['mint', '--model', 'm'])).not.toHaveProperty('expiresInMs');
  });

  test.each([
    [['mint', '--model', 'm', '--expires-in', '30d', '--expires-at', '2030-01-01T00:00:00Z'], 'keys mint: give --expires-in or --expires-at, not both'],
    [['mint', '--model', 'm', '--expires-in', 'a month'], '--expires-in "a month" is not a duration'],
    [['mint', '--model', 'm', '--expires-in', '0d'], 'keys mint: --expires-in "0d" must be longer than zero'],
    [['mint', '--model', 'm', '--expires-at', '2030-01-31'], 'keys mint: --expires-at "2030-01-31" is not an ISO 8601 time with a zone; write e.g. 2030-01-31T00:00:00Z'],
    [['mint', '--model', 'm', '--expires-at', '2030-13-45T00:00:00Z'], 'is not an ISO 8601 time'],
    [['mint', '--model', 'm', '--tier', 'Gold Plus'], 'keys mint: --tier "Gold Plus" is not a tier name'],
    [['list', '--model', 'm', '--expires-in', '1d'], 'keys list: --expires-in applies only to `nls keys mint`'],
    [['mint', '--model', 'm', '--since', '1d'], 'keys mint: --since applies only to `nls keys audit`'],
    [['audit', '--since', 'yesterday'], '--since "yesterday" is not a duration'],
    [['audit', '--output', 'yaml'], 'keys audit: --output "yaml" is not supported; use text or json'],
    [['purge'], 'keys: unknown action "purge"; use mint, list, revoke or audit'],
    [['list'], 'keys list: --model is required'],
    [['list', '--model', 'm', '--over-limit'], 'keys list: --over-limit applies only to `nls keys mint`'],
  ])('%j is refused: %s', (args, message) => {
    expect(() => parseKeysArgs(args)).toThrow(message);
  });

  test('mint takes --over-limit, an explicit bypass of the per-user limits', () => {
    expect(parseKeysArgs(['mint', '--model', 'm', '--over-limit'])).toMatchObject({ action: 'mint', overLimit: true });
    expect(parseKeysArgs(['mint', '--model', 'm'])).not.toHaveProperty('overLimit');
  });

  test('audit needs no model and filters by model, user and time', () => {
    expect(parseKeysArgs(['audit'])).toMatchObject({ action: 'audit', output: 'text' });
    expect(parseKeysArgs(['audit', '--model', 'm', '--user', 'alice', '--since', '7d', '--output', 'json'])).toMatchObject({ action: 'audit', model: 'm', user: 'alice', sinceMs: 7 * 86_400_000, output: 'json' });
  });
});

describe('nls keys tables', () => {
  test('list shows owner, expiry, granting groups and tier; old records show never and dashes', () => {
    expect(
      keysTable([
        { clientId: 'c1', createdBy: 'alice', createdAt: '2026-01-01T00:00:00.000Z', expiresAt: '2026-02-01T00:00:00.000Z', groups: ['team-a', 'team-b'], tier: 'standard', description: 'laptop' },
        { clientId: 'c2', createdBy: 'bob', createdAt: '2025-01-01T00:00:00.000Z' },
      ]),
    ).toEqual([
      'CLIENT ID\tOWNER\tCREATED AT\tEXPIRES AT\tGROUPS\tTIER\tDESCRIPTION',
      'c1\talice\t2026-01-01T00:00:00.000Z\t2026-02-01T00:00:00.000Z\tteam-a,team-b\tstandard\tlaptop',
      'c2\tbob\t2025-01-01T00:00:00.000Z\tnever\t-\t-\t',
    ]);
  });

  test('audit shows one line per entry', () => {
    expect(
      auditTable([{ at: '2026-01-01T00:00:00.000Z', action: 'expire', actor: 'operator', model: { kind: 'LLMModel', name: 'm' }, clientId: 'c1', owner: 'alice', reason: 'expired at 2026-01-01T00:00:00.000Z' }]),
    ).toEqual(['AT\tACTION\tACTOR\tMODEL\tCLIENT ID\tOWNER\tREASON', '2026-01-01T00:00:00.000Z\texpire\toperator\tLLMModel/m\tc1\talice\texpired at 2026-01-01T00:00:00.000Z']);
  });

  // Issue 29 (Low): owners, descriptions and reasons come from users; printed raw, an escape
  // sequence in a description could rewrite the terminal, and a tab or newline forge a column or row.
  test('escapes control characters instead of sending them to the terminal', () => {
    const [, row] = keysTable([{ clientId: 'c1', createdBy: 'mallory\u001b]0;pwned\u0007', createdAt: '2026-01-01T00:00:00.000Z', description: 'laptop\n c2\tadmin\u001b[2K\u2028' }]);
    expect(row).toBe('c1\tmallory\\x1b]0;pwned\\x07\t2026-01-01T00:00:00.000Z\tnever\t-\t-\tlaptop\\n c2\\tadmin\\x1b[2K\\u2028');
    const [, entry] = auditTable([{ at: 't', action: 'revoke', actor: 'a\u009b31m', model: { kind: 'LLMModel', name: 'm' }, clientId: 'c1', owner: 'o', reason: 'r\r' }]);
    expect(entry).toBe('t\trevoke\ta\\x9b31m\tLLMModel/m\tc1\to\tr\\r');
  });
});

describe('nls keys mint limits', () => {
  const portalDeployment = (env: { name: string; value: string }[], labels: Record<string, string> = { 'app.kubernetes.io/part-of': 'nebari-llm-serving', 'app.kubernetes.io/component': 'portal' }) => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'r-nebari-llm-serving-portal', namespace: 'llm', labels },
    spec: { template: { spec: { containers: [{ name: 'portal', env }] } } },
  });

  test("are the namespace portal's limits (portal.keyLimits, from its Deployment)", async () => {
    const kube = new MemoryKube();
    await kube.put(portalDeployment([{ name: 'NLS_PORTAL_KEYS_PER_USER_PER_MODEL', value: '4' }, { name: 'NLS_PORTAL_MINTS_PER_USER_PER_HOUR', value: '9' }]) as never);
    expect(await keyLimitsInNamespace(kube, 'llm')).toEqual({ keysPerUserPerModel: 4, mintsPerUserPerHour: 9 });
  });

  test("are the chart's defaults without our portal there, or when Deployments may not be read", async () => {
    const kube = new MemoryKube();
    await kube.put(portalDeployment([{ name: 'NLS_PORTAL_KEYS_PER_USER_PER_MODEL', value: '4' }], { 'app.kubernetes.io/component': 'portal' }) as never);
    expect(await keyLimitsInNamespace(kube, 'llm')).toEqual({ keysPerUserPerModel: 10, mintsPerUserPerHour: 20 });
    const forbidden = new MemoryKube();
    forbidden.request = () => Promise.reject(new KubeApiError(403, '', 'Forbidden', 'GET deployments: 403 Forbidden'));
    expect(await keyLimitsInNamespace(forbidden, 'llm')).toEqual({ keysPerUserPerModel: 10, mintsPerUserPerHour: 20 });
  });
});

describe('nls keys output reaches the terminal without control characters (issue 29, Low)', () => {
  test('JSON output escapes C1 controls and line separators, and parses back to the same value', () => {
    const records = [{ clientId: 'c1', createdBy: 'mallory\u009b2J', createdAt: '2026-01-01T00:00:00.000Z', description: 'a\u2028b\u007f' }];
    const line = terminalSafeJson(records);
    // eslint-disable-next-line no-control-regex -- the point of the test
    expect(line).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/);
    expect(line).toContain('mallory\\u009b2J');
    expect(JSON.parse(line)).toEqual(records);
  });

  test('error messages are escaped line by line', () => {
    expect('owner "\u001b]0;pwned\u0007"\nnext'.split('\n').map(terminalSafe).join('\n')).toBe('owner "\\x1b]0;pwned\\x07"\nnext');
  });
});
