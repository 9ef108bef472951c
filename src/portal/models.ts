// The models a portal user can pick: LLMModels and PassthroughModels of the portal's namespace,
// read as v1beta1, with what the pages and the access rule need.
import { API_GROUP_VERSION_V1BETA1 } from '../api/common';
import { ModelKind, ModelRef } from '../translate/keys/api-keys';
import { KubeObject, KubeRest } from '../kube/rest';

export interface PortalModel {
  readonly ref: ModelRef;
  readonly uid?: string;
  readonly access: { readonly public?: boolean; readonly groups?: readonly string[] };
  /** The model id clients send in requests (`model` in the OpenAI body). */
  readonly servedName: string;
  readonly externalEnabled: boolean;
  readonly phase?: string;
  /** Being deleted: no new keys. */
  readonly deleting: boolean;
}

type ModelObject = KubeObject & {
  spec?: {
    access?: { public?: boolean; groups?: string[] };
    model?: { name?: string };
    models?: { declared?: string[] };
    endpoints?: { external?: { enabled?: boolean } };
  };
  status?: { phase?: string };
};

export const MODEL_KINDS: readonly ModelKind[] = ['LLMModel', 'PassthroughModel'];

/** Pure: the portal's view of one model object. */
export function portalModel(kind: ModelKind, obj: ModelObject): PortalModel {
  const spec = obj.spec ?? {};
  const servedName = kind === 'LLMModel' ? (spec.model?.name ?? obj.metadata.name) : (spec.models?.declared?.[0] ?? obj.metadata.name);
  return {
    ref: { kind, name: obj.metadata.name, namespace: obj.metadata.namespace ?? '' },
    uid: obj.metadata.uid,
    access: { public: spec.access?.public, groups: spec.access?.groups ?? [] },
    servedName,
    externalEnabled: spec.endpoints?.external?.enabled !== false,
    phase: obj.status?.phase,
    deleting: !!obj.metadata.deletionTimestamp,
  };
}

export async function listModels(client: KubeRest, namespace: string): Promise<PortalModel[]> {
  const lists = await Promise.all(MODEL_KINDS.map(async (kind) => ({ kind, items: (await client.list<ModelObject>(API_GROUP_VERSION_V1BETA1, kind, { namespace })).items })));
  return lists
    .flatMap(({ kind, items }) => items.map((o) => portalModel(kind, o)))
    .sort((a, b) => a.ref.name.localeCompare(b.ref.name) || a.ref.kind.localeCompare(b.ref.kind));
}
