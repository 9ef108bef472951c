import { find, render } from './fixtures';

describe('key audit policy', () => {
  test('guards the audit ConfigMaps of the release namespace only, bound with Deny', () => {
    const objects = render(undefined, { releaseName: 'r', namespace: 'team-llm' });
    const policy = find(objects, 'ValidatingAdmissionPolicy');
    expect(policy.apiVersion).toBe('admissionregistration.k8s.io/v1');
    expect(policy.metadata.name).toBe('r-nebari-llm-serving-key-audit');
    expect(policy.spec.failurePolicy).toBe('Fail');
    expect(policy.spec.matchConstraints).toEqual({
      namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'team-llm' } },
      objectSelector: { matchLabels: { 'llm.nebari.dev/key-audit': 'true' } },
      resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['UPDATE', 'DELETE'], resources: ['configmaps'] }],
    });
    expect(policy.spec.validations.map((v: { message: string }) => v.message)).toEqual([
      'key audit entries are append-only: an update may add entries but never change or remove one',
      'an audit ConfigMap keeps its label llm.nebari.dev/key-audit: "true"',
      'key audit ConfigMaps can only be deleted by cluster administrators (system:masters)',
    ]);
    expect(find(objects, 'ValidatingAdmissionPolicyBinding').spec).toEqual({ policyName: 'r-nebari-llm-serving-key-audit', validationActions: ['Deny'] });
  });
});
