// Cluster state for offline admission: the models an AgentDeployment references and the names a
// new model may not share are looked up among the other objects of the same input (a GitOps
// repository's manifests, a custom build's models). Secret access and the right to bind a model
// cannot be reviewed without a cluster, so they are granted; the API server still reviews them
// when the object is applied.
import type { ClusterLookups } from '../webhook/lookups';
import type { KubernetesObject } from '../webhook/review';

/** ClusterLookups answered from `objects` (each with its namespace filled in). */
export function offlineLookups(objects: readonly KubernetesObject[]): ClusterLookups {
  return {
    async getModel(kind, namespace, name) {
      return objects.find((o) => o.kind === kind && o.metadata?.name === name && o.metadata?.namespace === namespace);
    },
    async listModels(kind, namespace) {
      return objects.filter((o) => o.kind === kind && o.metadata?.namespace === namespace);
    },
    async userMayGet() {
      return { allowed: true, reason: 'not reviewed offline' };
    },
    async userMayBindModel() {
      return { allowed: true, reason: 'not reviewed offline' };
    },
  };
}
