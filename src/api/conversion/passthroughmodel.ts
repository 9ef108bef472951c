// PassthroughModel v1alpha1 <-> v1beta1 field mapping (docs/api-versions.md, P1–P3): the credential
// Secret moves into `credential.secretRef.name`, and the legacy `schemaVersion` (`api/v1`) becomes
// `pathPrefix` (`/api/v1`). The old default `schemaVersion: v1` of a Bedrock object means nothing
// and has no v1beta1 form; a Bedrock object without pathPrefix reads back with it in v1alpha1.
import { PASSTHROUGHMODEL_DEFAULTS, PASSTHROUGHMODEL_KIND } from '../passthroughmodel';
import { isObject, type JsonObject, type KindMapping, objectAt, withoutV1beta1Fields } from './shared';

const trimSlashes = (text: string) => text.replace(/^\/+|\/+$/g, '');

function backendType(provider: JsonObject): unknown {
  return objectAt(provider, 'backend')?.type ?? PASSTHROUGHMODEL_DEFAULTS.backendType;
}

/** `object` with its spec.provider replaced by `map(provider copy)`; objects without one are returned as they are. */
function withProvider(object: JsonObject, map: (provider: JsonObject) => void): JsonObject {
  const spec = objectAt(object, 'spec');
  const provider = objectAt(spec, 'provider');
  if (!spec || !provider) return object;
  const copy = { ...provider };
  map(copy);
  return { ...object, spec: { ...spec, provider: copy } };
}

function up(object: JsonObject): JsonObject {
  return withProvider(object, (p) => {
    const credential = 'credential' in p ? (isObject(p.credential) ? { ...p.credential } : undefined) : {};
    if (credential && 'credentialSecretName' in p && !('secretRef' in credential)) {
      credential.secretRef = { name: p.credentialSecretName };
      delete p.credentialSecretName;
      p.credential = credential;
    }
    if ('schemaVersion' in p && !('pathPrefix' in p)) {
      const version = p.schemaVersion;
      delete p.schemaVersion;
      if (typeof version !== 'string') p.pathPrefix = version;
      else if (!(backendType(p) === 'Bedrock' && version === PASSTHROUGHMODEL_DEFAULTS.schemaVersion)) p.pathPrefix = `/${trimSlashes(version)}`;
    }
  });
}

function down(object: JsonObject): JsonObject {
  return withProvider(withoutV1beta1Fields(object, ['routing']), (p) => {
    const credential = objectAt(p, 'credential') ? { ...(p.credential as JsonObject) } : undefined;
    const secretRef = objectAt(credential, 'secretRef');
    if (credential && secretRef && 'name' in secretRef && !('credentialSecretName' in p)) {
      p.credentialSecretName = secretRef.name;
      const rest = { ...secretRef };
      delete rest.name;
      if (Object.keys(rest).length > 0) credential.secretRef = rest;
      else delete credential.secretRef;
      if (Object.keys(credential).length > 0) p.credential = credential;
      else delete p.credential;
    }
    if ('pathPrefix' in p && !('schemaVersion' in p)) {
      const prefix = p.pathPrefix;
      delete p.pathPrefix;
      p.schemaVersion = typeof prefix === 'string' ? trimSlashes(prefix) : prefix;
    } else if (!('pathPrefix' in p) && !('schemaVersion' in p) && backendType(p) === 'Bedrock') {
      // What v1alpha1 always stored for Bedrock (its schema default), so old readers see no change.
      p.schemaVersion = PASSTHROUGHMODEL_DEFAULTS.schemaVersion;
    }
  });
}

export const PASSTHROUGHMODEL_MAPPING: KindMapping = { kind: PASSTHROUGHMODEL_KIND, up, down };
