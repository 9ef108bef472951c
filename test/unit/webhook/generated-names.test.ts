// Two models never write the same generated object (issue 29, Low): a new model whose name equals
// another model's cut name (`<head>-<hash>`, for one of its generated objects) is refused, naming
// the object and the fix; names of different kinds never count as a clash.
import { passthroughModelAdmission } from '../../../src/webhook/passthroughmodel';
import { apiKeysSecretName, generatedNamesByKind, MAX_GENERATED_NAME_LENGTH, sharedGeneratedNames } from '../../../src/translate/gateway/names';
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

  it('finds no shared name between names too short to be cut, by comparing every generated name (what the shortcut skips)', () => {
    // The names one suffix of a kind makes from another: the closest a short pair comes to a clash.
    const suffixes = Object.values(generatedNamesByKind('m')).flat().map((n) => n.slice(1));
    const shortest = MAX_GENERATED_NAME_LENGTH - Math.max(...suffixes.map((s) => s.length));
    const names = ['a', 'm', 'a-b', 'x'.repeat(shortest - 1), 'x'.repeat(shortest)].flatMap((base) => [base, ...suffixes.map((s) => `${base}${s}`.slice(0, shortest))]);
    let pairs = 0;
    for (const a of names) {
      for (const b of names) {
        if (a === b) continue;
        const [na, nb] = [generatedNamesByKind(a), generatedNamesByKind(b)];
        expect(Object.keys(na).filter((kind) => na[kind].some((name) => nb[kind].includes(name)))).toEqual([]);
        expect(sharedGeneratedNames(a, b)).toEqual([]);
        pairs++;
      }
    }
    expect(pairs).toBeGreaterThan(1000);
    // One character longer, and the full comparison runs (the impostor above is such a case).
    expect(sharedGeneratedNames(impostor, long)).not.toEqual([]);
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
