// AgentDeployment v1alpha1 <-> v1beta1 field mapping (docs/api-versions.md, A1–A3): the container
// fields move under `spec.container`, `spec.provider.overrides` becomes `spec.overrides`, and the
// OTLP protocol is always written out, because an omitted one means grpc in v1alpha1 and
// http/protobuf in v1beta1 (the API server fills the target version's default after conversion).
import { AGENTDEPLOYMENT_DEFAULTS, AGENTDEPLOYMENT_KIND } from '../agentdeployment';
import { AGENTDEPLOYMENT_V1BETA1_DEFAULTS } from '../v1beta1/agentdeployment';
import { isObject, type JsonObject, type KindMapping, move, objectAt } from './shared';

const CONTAINER_FIELDS = ['image', 'command', 'args', 'env', 'resources'] as const;

/** `spec` with an omitted otlp.protocol written as `protocol` (the source version's default). */
function explicitProtocol(spec: JsonObject, protocol: string): void {
  const observability = objectAt(spec, 'observability');
  const otlp = objectAt(observability, 'otlp');
  if (!observability || !otlp || 'protocol' in otlp) return;
  spec.observability = { ...observability, otlp: { ...otlp, protocol } };
}

function up(object: JsonObject): JsonObject {
  const spec = objectAt(object, 'spec');
  if (!spec) return object;
  const s: JsonObject = { ...spec };
  if (!('container' in s)) {
    const container: JsonObject = {};
    for (const field of CONTAINER_FIELDS) move(s, field, container);
    if (Object.keys(container).length > 0) s.container = container;
  }
  const provider = objectAt(s, 'provider');
  if (provider && 'overrides' in provider && !('overrides' in s)) {
    const rest = { ...provider };
    move(rest, 'overrides', s);
    if (Object.keys(rest).length > 0) s.provider = rest;
    else delete s.provider;
  }
  explicitProtocol(s, AGENTDEPLOYMENT_DEFAULTS.otlpProtocol);
  return { ...object, spec: s };
}

function down(object: JsonObject): JsonObject {
  const spec = objectAt(object, 'spec');
  if (!spec) return object;
  const s: JsonObject = { ...spec };
  const container = objectAt(s, 'container') ? { ...(s.container as JsonObject) } : undefined;
  if (container) {
    for (const field of CONTAINER_FIELDS) if (!(field in s)) move(container, field, s);
    if (Object.keys(container).length > 0) s.container = container;
    else delete s.container;
  }
  if ('overrides' in s && (!('provider' in s) || (isObject(s.provider) && !('overrides' in s.provider)))) {
    const provider = { ...(objectAt(s, 'provider') ?? {}) };
    move(s, 'overrides', provider);
    s.provider = provider;
  }
  explicitProtocol(s, AGENTDEPLOYMENT_V1BETA1_DEFAULTS.otlpProtocol);
  return { ...object, spec: s };
}

export const AGENTDEPLOYMENT_MAPPING: KindMapping = { kind: AGENTDEPLOYMENT_KIND, up, down };
