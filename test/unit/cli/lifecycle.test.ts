// Pure parts of upgrade, rollback and verify: plans (--dry-run), rollback revision choice, values
// handling, installation names, the verify table.
import { installationFromDeployment } from '../../../src/cli/lifecycle/installation';
import { chartVersionOf, valuesArgs } from '../../../src/cli/lifecycle/helm';
import { rollbackPlan, runRollback } from '../../../src/cli/lifecycle/rollback';
import { withoutPhaseKeys } from '../../../src/cli/lifecycle/guarded-phases';
import { runUpgrade } from '../../../src/cli/lifecycle/upgrade';
import { acceptance, formatChecks, verifyExitCode } from '../../../src/cli/lifecycle/verify';

async function capture(run: (args: string[], out: (l: string) => void) => Promise<number>, args: string[]) {
  const lines: string[] = [];
  const code = await run(args, (l) => lines.push(l));
  return { code, lines };
}

describe('nls upgrade --dry-run', () => {
  test('prints the phases in the seed order with the helm commands and the values each sets', async () => {
    const { code, lines } = await capture(runUpgrade, ['--chart', 'oci://registry.example.com/nebari/charts/nebari-llm-serving', '--version', '0.3.0', '--dry-run']);
    expect(code).toBe(0);
    const phases = lines.filter((l) => /^\d+\. /.test(l)).map((l) => l.split(':')[0]);
    expect(phases).toEqual(['1. preflight', '2. check', '3. crds-check', '4. crds', '5. guard', '6. controller', '7. activate', '8. unguard']);
    const text = lines.join('\n');
    expect(text).toContain('helm show chart oci://registry.example.com/nebari/charts/nebari-llm-serving --version 0.3.0 (refuse an unpublished version)');
    expect(text).toMatch(/1\. preflight[\s\S]*admit every stored LLMModel, PassthroughModel and AgentDeployment as a CREATE[\s\S]*refuse \(exit 3, nothing changed\)/);
    expect(text).toMatch(/6\. controller[\s\S]*--set webhook\.upgradeGuard\.enabled=true --set webhook\.agentDeployment\.enabled=false[\s\S]*restart the operator Deployment/);
    expect(text).toMatch(/7\. activate[\s\S]*--set webhook\.upgradeGuard\.enabled=true --set webhook\.agentDeployment\.enabled=true[\s\S]*waits for: the serving CA/);
    expect(text).toMatch(/8\. unguard[\s\S]*--set webhook\.upgradeGuard\.enabled=false --set webhook\.agentDeployment\.enabled=true/);
  });

  test('with --resume-from the earlier phases are marked skipped', async () => {
    const { lines } = await capture(runUpgrade, ['--chart', 'oci://r/nebari-llm-serving', '--version', '0.3.0', '--dry-run', '--resume-from', 'activate']);
    expect(lines).toContain('6. controller: helm upgrade to the target version with the AgentDeployment routes off; restart the operator (skipped: resuming later)');
  });

  test.each([
    [['--version', '0.3.0'], 'error: upgrade: --chart is required'],
    [['--chart', 'oci://r/c', '--version', '1', '--to', '0.1.0'], 'error: upgrade: --to belongs to rollback; use --version'],
    [['--chart', 'oci://r/c', '--version', '1', '-f', '/nonexistent.yaml'], 'error: upgrade: values file /nonexistent.yaml does not exist'],
    [['--chart', 'oci://r/c', '--version', '1', '--dry-run', '--resume-from', 'check'], 'error: --resume-from "check" is not a phase of this command; use one of: crds, crds-check'],
  ])('%j exits 2: %s', async (args, message) => {
    const { code, lines } = await capture(runUpgrade, args);
    expect(code).toBe(2);
    expect(lines.join('\n')).toContain(message.split(';')[0]);
  });
});

describe('nls rollback --dry-run', () => {
  test('guard and routes-off from the current version, then the rollback version, CRDs untouched', async () => {
    const { code, lines } = await capture(runRollback, ['--to', '0.2.0', '--chart', 'oci://r/nebari-llm-serving', '--dry-run']);
    expect(code).toBe(0);
    expect(lines.filter((l) => /^\d+\. /.test(l)).map((l) => l.split(':')[0])).toEqual(['1. check', '2. guard', '3. routes-off', '4. controller', '5. activate', '6. unguard']);
    const text = lines.join('\n');
    expect(text).toContain('CRDs are left as they are (never deleted or downgraded)');
    expect(text).toMatch(/4\. controller[\s\S]*--version 0\.2\.0[\s\S]*agentDeployment\.enabled=false/);
  });
});

describe('rollbackPlan', () => {
  const rev = (revision: number, version: string, status = 'superseded') => ({ revision, chart: `nebari-llm-serving-${version}`, status });

  test('rolls back from the newest revision and reuses the values of the last one that ran the target', () => {
    const plan = rollbackPlan([rev(1, '0.2.0'), rev(2, '0.2.0'), rev(3, '0.2.1'), rev(4, '0.2.1', 'deployed')], '0.2.0', false);
    expect(plan.from.revision).toBe(4);
    expect(plan.previous?.revision).toBe(2);
  });

  test('when resuming after the rollback version was installed, the current version is still the one before it', () => {
    const plan = rollbackPlan([rev(1, '0.2.0'), rev(2, '0.2.1'), rev(3, '0.2.1'), rev(4, '0.2.0', 'failed')], '0.2.0', true);
    expect(plan.from.revision).toBe(3);
    expect(plan.previous?.revision).toBe(1);
  });

  test('refuses when already at the target, or when nothing else ever ran', () => {
    expect(() => rollbackPlan([rev(1, '0.2.1'), rev(2, '0.2.0', 'deployed')], '0.2.0', false)).toThrow(/already runs nebari-llm-serving-0\.2\.0; nothing to roll back/);
    expect(() => rollbackPlan([rev(1, '0.2.0')], '0.2.0', true)).toThrow(/every revision of the release runs 0\.2\.0/);
  });
});

describe('values handling', () => {
  test('reused values lose only the keys the phases set', () => {
    expect(withoutPhaseKeys({ webhook: { upgradeGuard: { enabled: true }, agentDeployment: { enabled: false }, timeoutSeconds: 5 }, operator: { replicas: 2 } })).toEqual({
      webhook: { timeoutSeconds: 5 },
      operator: { replicas: 2 },
    });
    expect(withoutPhaseKeys({ webhook: { upgradeGuard: { enabled: true } } })).toEqual({});
  });

  test('values files come before --set pairs', () => {
    expect(valuesArgs({ files: ['a.yaml'], set: { 'webhook.upgradeGuard.enabled': true } })).toEqual(['--values', 'a.yaml', '--set', 'webhook.upgradeGuard.enabled=true']);
  });

  test.each([
    ['nebari-llm-serving-0.2.1', '0.2.1'],
    ['nebari-llm-serving-0.2.1-test', '0.2.1-test'],
    ['nebari-llm-serving-1.0.0-rc.1+build.5', '1.0.0-rc.1+build.5'],
    ['nebari-llm-serving', ''],
  ])('chart field %s has version "%s"', (field, version) => expect(chartVersionOf(field)).toBe(version));
});

describe('installationFromDeployment', () => {
  const deployment = (env: { name: string; value: string }[]) => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'prod-nebari-llm-serving-operator', namespace: 'llm', labels: { 'app.kubernetes.io/instance': 'prod' } },
    spec: { template: { spec: { containers: [{ name: 'operator', env }] } } },
  });

  test('reads the names from the environment contract', () => {
    expect(
      installationFromDeployment(
        deployment([
          { name: 'NLS_WEBHOOK_SERVICE', value: 'prod-nebari-llm-serving-webhook' },
          { name: 'NLS_WEBHOOK_SECRET', value: 'prod-webhook-server-cert' },
          { name: 'NLS_VALIDATING_WEBHOOK_CONFIGURATIONS', value: 'prod-nebari-llm-serving-validating' },
          { name: 'NLS_MUTATING_WEBHOOK_CONFIGURATIONS', value: 'prod-nebari-llm-serving-mutating' },
          { name: 'NLS_WATCH_NAMESPACES', value: 'team-a, team-b' },
        ]),
      ),
    ).toEqual({
      release: 'prod',
      namespace: 'llm',
      deployment: 'prod-nebari-llm-serving-operator',
      webhookService: 'prod-nebari-llm-serving-webhook',
      webhookSecret: 'prod-webhook-server-cert',
      webhookConfigurations: ['prod-nebari-llm-serving-validating', 'prod-nebari-llm-serving-mutating'],
      guard: 'prod-nebari-llm-serving-agentdeployment-guard',
      watchNamespaces: ['team-a', 'team-b'],
    });
  });

  test('a Deployment without the contract is named with the missing variable', () => {
    expect(() => installationFromDeployment(deployment([]))).toThrow('Deployment llm/prod-nebari-llm-serving-operator has no NLS_WEBHOOK_SERVICE in its operator container');
  });
});

describe('verify table', () => {
  test('pads the columns and exits 5 only when a check fails', () => {
    const checks = [
      { check: 'operator ready', result: 'pass' as const, detail: '1/1 available' },
      { check: 'no upgrade guard', result: 'fail' as const, detail: 'guard installed' },
      { check: 'HTTPRoute accepted', result: 'skip' as const, detail: 'not served' },
    ];
    expect(formatChecks(checks)).toEqual([
      'CHECK               RESULT  DETAIL',
      'operator ready      PASS    1/1 available',
      'no upgrade guard    FAIL    guard installed',
      'HTTPRoute accepted  SKIP    not served',
    ]);
    expect(verifyExitCode(checks)).toBe(5);
    expect(verifyExitCode(checks.filter((c) => c.result !== 'fail'))).toBe(0);
  });

  test.each([
    ['no status', {}, 'skip'],
    ['route accepted by every parent', { parents: [{ conditions: [{ type: 'Accepted', status: 'True' }] }, { conditions: [{ type: 'Accepted', status: 'True' }] }] }, 'pass'],
    ['policy refused by one ancestor', { ancestors: [{ conditions: [{ type: 'Accepted', status: 'True' }] }, { conditions: [{ type: 'Accepted', status: 'False' }] }] }, 'fail'],
    ['backend with top-level conditions', { conditions: [{ type: 'Accepted', status: 'True' }] }, 'pass'],
  ])('%s -> %s', (_name, status, result) => expect(acceptance({ status })).toBe(result));
});
