import { plainObjects, plainObjectsByFile } from '../../../src/chart/render';
import { AnyObject, find, valuesWith } from './fixtures';

/** The hook file rendered with concrete values (plain renderings leave it out unless asked). */
function renderCheck(change?: Parameters<typeof valuesWith>[0]): AnyObject[] {
  return plainObjectsByFile(valuesWith(change), { releaseName: 'r1', namespace: 'ns1' }, true)['webhook-check.yaml'] as AnyObject[];
}

describe('post-install webhook check', () => {
  test('is four hooks after install, upgrade and rollback: RBAC first, deleted once the check succeeds', () => {
    const objects = renderCheck();
    expect(objects.map((o) => o.kind)).toEqual(['ServiceAccount', 'Role', 'RoleBinding', 'Job']);
    for (const o of objects) {
      expect(o.metadata.name).toBe('r1-nebari-llm-serving-webhook-check');
      expect(o.metadata.annotations).toMatchObject({
        'helm.sh/hook': 'post-install,post-upgrade,post-rollback',
        'helm.sh/hook-delete-policy': 'before-hook-creation,hook-succeeded',
      });
    }
    const weight = (kind: string) => Number(find(objects, kind).metadata.annotations['helm.sh/hook-weight']);
    expect(weight('Role')).toBeLessThan(weight('Job'));
    expect(weight('RoleBinding')).toBeLessThan(weight('Job'));
  });

  test('may only create PassthroughModels in the release namespace (the probe is a dry run)', () => {
    const objects = renderCheck();
    expect(find(objects, 'Role').rules).toEqual([{ apiGroups: ['llm.nebari.dev'], resources: ['passthroughmodels'], verbs: ['create'] }]);
    expect(find(objects, 'RoleBinding').subjects).toEqual([{ kind: 'ServiceAccount', name: 'r1-nebari-llm-serving-webhook-check', namespace: 'ns1' }]);
  });

  test('runs nls wait-webhooks from the operator image under the restricted profile, once, with a deadline', () => {
    const job = find(renderCheck((v) => { v.operator.image.digest = `sha256:${'a'.repeat(64)}`; v.webhook.installCheck.timeoutSeconds = 90; }), 'Job');
    const pod = job.spec.template.spec;
    const container = pod.containers[0];
    expect(container.image).toBe(`nebari/nebari-llm-serving@sha256:${'a'.repeat(64)}`);
    expect(container.command).toEqual(['/nodejs/bin/node', '/app/lib/src/cli/main.js', 'wait-webhooks', '--namespace', 'ns1', '--timeout', '90s']);
    expect(job.spec).toMatchObject({ backoffLimit: 0, activeDeadlineSeconds: 150 });
    expect(pod).toMatchObject({ restartPolicy: 'Never', serviceAccountName: 'r1-nebari-llm-serving-webhook-check', securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } } });
    expect(container.securityContext).toMatchObject({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
    expect(container.resources).toEqual({ requests: { cpu: '10m', memory: '64Mi' }, limits: { memory: '192Mi' } });
  });

  test('follows the operator placement and pull secrets', () => {
    const pod = find(renderCheck((v) => {
      v.operator.nodeSelector = { pool: 'system' };
      v.operator.tolerations = [{ key: 'dedicated', operator: 'Exists' }];
      v.imagePullSecrets = [{ name: 'pull' }];
    }), 'Job').spec.template.spec;
    expect(pod).toMatchObject({ nodeSelector: { pool: 'system' }, tolerations: [{ key: 'dedicated', operator: 'Exists' }], imagePullSecrets: [{ name: 'pull' }] });
  });

  test('plain renderings (deploy/ bundles, custom builds) leave the hook out: nothing would run it', () => {
    const hookName = (o: unknown) => String((o as AnyObject).metadata.name).endsWith('-webhook-check');
    expect(plainObjects(valuesWith()).filter(hookName)).toEqual([]);
    expect(plainObjects(valuesWith(), {}, true).filter(hookName)).toHaveLength(4);
    expect(plainObjectsByFile(valuesWith((v) => { v.webhook.installCheck.enabled = false; }), {}, true)['webhook-check.yaml']).toBeUndefined();
  });
});
