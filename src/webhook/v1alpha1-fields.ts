// The webhooks decide on the v1beta1 form of an object. A v1alpha1 client's request reaches them
// converted (matchPolicy: Equivalent), so their messages would name fields the client never wrote;
// these renames put the client's own field names back (docs/api-versions.md, the change tables).

type Rename = readonly [RegExp, string];

// A field path starts at `spec` (not inside another word or path) and ends before any further name character.
const at = (path: string, rest = '') => new RegExp(`(?<![\\w.])${path.replace(/\./g, '\\.')}${rest}(?![\\w])`, 'g');

const RENAMES: Record<string, readonly Rename[]> = {
  LLMModel: [
    [at('spec.serving.engineArgs'), 'spec.serving.vllmArgs'],
    [at('spec.serving.env'), 'spec.advanced.vllm.extraEnv'],
    [at('spec.scheduling'), 'spec.advanced.vllm'],
    [at('spec.inferencePool'), 'spec.advanced.inferencePool'],
  ],
  PassthroughModel: [
    [at('spec.provider.credential.secretRef', '(\\.name)?'), 'spec.provider.credentialSecretName'],
    [at('spec.provider.pathPrefix'), 'spec.provider.schemaVersion'],
  ],
  AgentDeployment: [
    [at('spec.container.', '(image|command|args|env|resources)'), 'spec.$1'],
    [at('spec.overrides'), 'spec.provider.overrides'],
  ],
};

/** `message` (about a v1beta1 object of `kind`) with the v1beta1 field paths written as v1alpha1 names them. */
export function v1alpha1FieldNames(kind: string, message: string): string {
  return (RENAMES[kind] ?? []).reduce((text, [pattern, replacement]) => text.replace(pattern, replacement), message);
}
