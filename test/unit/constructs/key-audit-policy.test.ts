import { find, render } from './fixtures';

describe('key audit policy', () => {
  test('guards the audit ConfigMaps of the release namespace only, bound with Deny', () => {
    const objects = render(undefined, { releaseName: 'r', namespace: 'team-llm' });
    const policy = find(objects, 'ValidatingAdmissionPolicy');
    expect(policy.apiVersion).toBe('admissionregistration.k8s.io/v1');
    expect(policy.metadata.name).toBe('r-nebari-llm-serving-key-audit');
    expect(policy.spec.failurePolicy).toBe('Fail');
    // No object selector: an unlabelled ConfigMap under a shard's name is matched (by name) too, and so is CREATE.
    expect(policy.spec.matchConstraints).toEqual({
      namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'team-llm' } },
      resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE', 'DELETE'], resources: ['configmaps'] }],
    });
    expect(policy.spec.matchConditions).toEqual([
      {
        name: 'key-audit-configmaps',
        expression: expect.stringContaining("object.metadata.name.startsWith('nls-key-audit-') || (has(object.metadata.labels) && 'llm.nebari.dev/key-audit' in object.metadata.labels)"),
      },
    ]);
    expect(policy.spec.validations.map((v: { message: string }) => v.message)).toEqual([
      'key audit entries are append-only: an update may add entries but never change or remove one',
      'an audit ConfigMap keeps its labels llm.nebari.dev/key-audit: "true" and llm.nebari.dev/key-audit-day: <day>, and is named nls-key-audit-<day>[-<n>]',
      'an audit ConfigMap is never immutable: every later entry of its day is appended to it',
      'an audit ConfigMap has no owner references: the garbage collector must never remove it',
      'key audit ConfigMaps can only be deleted by cluster administrators (system:masters)',
    ]);
    expect(find(objects, 'ValidatingAdmissionPolicyBinding').spec).toEqual({ policyName: 'r-nebari-llm-serving-key-audit', validationActions: ['Deny'] });
  });
});
