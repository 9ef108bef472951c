// Two models never write the same generated object (issue 29, Low): a new model whose name equals
// another model's cut name (`<head>-<hash>`, for one of its generated objects) is refused, naming
// the object and the fix; names of different kinds never count as a clash.
import { passthroughModelAdmission } from '../../../src/webhook/passthroughmodel';
import { apiKeysSecretName, sharedGeneratedNames } from '../../../src/translate/gateway/names';
import { clusterState, context, operatorNamespace, passthroughModel, request } from './fixtures';

const long = `team-${'x'.repeat(80)}`;
/** A valid model name whose `-api-keys` Secret is the long model's. */
const impostor = apiKeysSecretName(long).slice(0, -'-api-keys'.length);

describe('generated names of two models', () => {
  it('finds a short name that equals a long name\'s cut form, and nothing between unrelated names', () => {
    expect(sharedGeneratedNames(impostor, long)).toEqual([`Secret ${apiKeysSecretName(long)}`]);
    expect(sharedGeneratedNames('a', 'a-external')).toEqual([]);
    expect(sharedGeneratedNames(`${'m'.repeat(70)}-alpha`, `${'m'.repeat(70)}-bravo`)).toEqual([]);
  });

  it('refuses to create a model whose key Secret would be another model\'s, naming both and the fix', async () => {
    const state = clusterState({
      models: [{ kind: 'LLMModel', namespace: operatorNamespace, name: long, spec: { model: { name: 'org/long' } } }],
      readableSecrets: [`alice/${operatorNamespace}/openai-key`],
    });
    const verdict = await passthroughModelAdmission.validate(request(passthroughModel({}, {}, { name: impostor })), context(state));
    expect(verdict.denials).toEqual([
      `metadata.name: the PassthroughModel "${impostor}" would generate objects named like those of LLMModel ${long} in "${operatorNamespace}" (Secret ${apiKeysSecretName(long)}); choose another name`,
    ]);
  });
});
