// The Role the operator keeps for the key portal (issue 29, Medium 6): which Secrets it names, in
// which order, and that no set of names can widen it to every Secret.
import { desiredApiKeySecret } from '../../../../src/translate/keys/api-keys';
import { isPortalUserSecretName, portalSecretNames, portalSecretsRoleRules, secretNamesOfRole } from '../../../../src/translate/keys/portal-secrets';
import { desiredPortalSecretsRole } from '../../../../src/operator/portal-secrets-role';
import { userSecretName, userHash } from '../../../../src/portal/user-tokens';

const keySecret = (kind: 'LLMModel' | 'PassthroughModel', name: string) => desiredApiKeySecret({ kind, name, namespace: 'ns' });
const userSecret = (sub: string) => ({ metadata: { name: userSecretName(sub), labels: { 'llm.nebari.dev/portal-user': userHash(sub) } } });
const plain = (name: string, labels: Record<string, string> = {}, annotations: Record<string, string> = {}) => ({ metadata: { name, labels, annotations } });

describe("the key portal's Secret Role", () => {
  test('names the key Secrets of both model kinds and the portal users\' Secrets, sorted and once each, whatever order the watches give', () => {
    const secrets = [userSecret('zed'), keySecret('PassthroughModel', 'beta'), keySecret('LLMModel', 'alpha'), userSecret('amy'), keySecret('LLMModel', 'alpha')];
    const names = portalSecretNames(secrets);
    expect(names).toEqual([...new Set(secrets.map((s) => s.metadata.name))].sort());
    expect(names).toHaveLength(4);
    expect(portalSecretNames([...secrets].reverse())).toEqual(names);
  });

  test.each([
    ['a provider credential', plain('openai-credentials')],
    ['a token Secret labelled as key Secret under another name', plain('operator-token', { 'llm.nebari.dev/api-keys': 'true', 'llm.nebari.dev/model-kind': 'LLMModel' }, { 'llm.nebari.dev/model-name': 'team' })],
    ['a key Secret label without the model annotation', plain('team-api-keys', { 'llm.nebari.dev/api-keys': 'true', 'llm.nebari.dev/model-kind': 'LLMModel' })],
    ['a key Secret of an unknown kind', plain('team-api-keys', { 'llm.nebari.dev/api-keys': 'true', 'llm.nebari.dev/model-kind': 'AgentDeployment' }, { 'llm.nebari.dev/model-name': 'team' })],
    ['a user label on a Secret of another name', plain('webhook-ca', { 'llm.nebari.dev/portal-user': '0123' })],
    ['a user Secret whose hash does not match its label', plain('nls-portal-user-0123', { 'llm.nebari.dev/portal-user': '4567' })],
  ])('never names %s', (_what, secret) => {
    expect(portalSecretNames([secret])).toEqual([]);
  });

  test('has no rule at all without names: an empty resourceNames list would grant every Secret', () => {
    expect(portalSecretsRoleRules([])).toEqual([]);
    expect(portalSecretsRoleRules(['a', 'b'])).toEqual([{ apiGroups: [''], resources: ['secrets'], resourceNames: ['a', 'b'], verbs: ['get', 'patch'] }]);
  });

  test('reads back the names it wrote (what a restart compares before writing anything)', () => {
    const names = portalSecretNames([keySecret('LLMModel', 'alpha'), userSecret('amy')]);
    const role = desiredPortalSecretsRole('rel-portal-secrets', 'ns', names, { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'rel-portal-secrets', uid: 'u1' } });
    expect(secretNamesOfRole(role)).toEqual(names);
    expect(role.metadata.ownerReferences).toEqual([{ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', name: 'rel-portal-secrets', uid: 'u1' }]);
    expect(secretNamesOfRole(undefined)).toEqual([]);
    expect(names.filter(isPortalUserSecretName)).toEqual([userSecretName('amy')]);
  });
});
