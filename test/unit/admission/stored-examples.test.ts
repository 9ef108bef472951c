// Every committed LLMModel example, admitted offline exactly as the API server stores it through
// the chart's webhooks (schema defaults, the mutating webhook's defaults), then handed to its
// provider's translation as the operator does: a stored object must never be one its own provider
// refuses (the mutating webhook once wrote spec.serving.tensorParallelism, which KAITO refuses).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { admit } from '../../../src/admission';
import { llmModelProviderName } from '../../../src/api/llmmodel';
import type { LLMModelV1beta1 } from '../../../src/api/v1beta1';
import { llmProvider } from '../../../src/translate/providers';

const operatorNamespace = 'models';
const examplesDir = path.join(__dirname, '..', '..', '..', 'examples', 'llmmodel');
const examples = fs.readdirSync(examplesDir).filter((f) => f.endsWith('.yaml')).sort();

describe('stored LLMModel examples translate', () => {
  it.each(examples)('examples/llmmodel/%s, admitted offline as stored, is translated by its provider without errors', async (file) => {
    const object = parseYaml(fs.readFileSync(path.join(examplesDir, file), 'utf8')) as Record<string, unknown>;
    const admitted = await admit(object, { operatorNamespace, objects: [] });
    expect(admitted.problems).toEqual([]);
    const stored = { ...(admitted.object as unknown as LLMModelV1beta1), metadata: { ...(admitted.object.metadata as object), uid: 'uid-1' } } as LLMModelV1beta1;
    const translation = llmProvider(llmModelProviderName(stored.spec)).translate(stored, {});
    expect(translation.errors).toEqual([]);
  });

  it('the KAITO example is stored without spec.serving.tensorParallelism (KAITO sets it from the node)', async () => {
    const object = parseYaml(fs.readFileSync(path.join(examplesDir, 'kaito.yaml'), 'utf8')) as Record<string, unknown>;
    const admitted = await admit(object, { operatorNamespace });
    expect((admitted.object.spec as LLMModelV1beta1['spec']).serving?.tensorParallelism).toBeUndefined();
  });
});
