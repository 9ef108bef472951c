// The allow-list of an LLMModel's `spec.provider.overrides`, per provider. The overrides are merged
// into the provider resource the operator creates (a KAITO Workspace, a Dynamo graph, a KubeRay
// RayService, an llm-d InferenceObjective), and the provider's operator turns that into pods with
// its own rights. Left open, whoever may write an LLMModel could give those pods another
// ServiceAccount (`serviceAccountName: <release>-operator`), mount any Secret or host path, join
// the host's network or PID namespace, run privileged, or run another image. So each provider
// lists the paths an override may set; below a pod template only scheduling, resources, probes,
// environment (reviewed like spec.serving.env) and hardening security settings are allowed.
import type { LLMProviderName } from '../api/llmmodel';
import { securityContextProblems } from './agent-overrides';
import { envReview } from './pod-references';
import { isRecord } from './review';
import type { SecretReference } from './secret-access';

/** What an override may hold at one path. */
type Rule =
  /** Any value: nothing below it can change identity, volumes, host namespaces, privilege or images. */
  | 'value'
  /** An environment list: `valueFrom` reviewed as for spec.serving.env. */
  | 'env'
  /** A container image below a pod template: only spec.serving.image itself (so lists can be replaced whole). */
  | 'containerImage'
  /** An image the provider pulls (KAITO adapters): the image allow-list applies. */
  | 'image'
  /** The name of a ConfigMap the provider mounts, reviewed as the requesting user. */
  | 'configMapName'
  /** Pod or container security settings: only the hardening subset the agent overrides allow. */
  | 'podSecurityContext'
  | 'containerSecurityContext'
  /** Pod annotations, except the ones that loosen AppArmor or seccomp. */
  | 'podAnnotations'
  | ObjectRule
  | ListRule
  | OneOfRule;

interface ObjectRule {
  readonly keys: Readonly<Record<string, Rule>>;
  /** The rule of keys not listed (maps keyed by a name, such as Dynamo's services). */
  readonly anyKey?: Rule;
}

interface ListRule {
  readonly items: Rule;
}

/** One of a few scalar values, each safe. */
interface OneOfRule {
  readonly oneOf: readonly string[];
  /** Why the others are refused. */
  readonly because: string;
}

// Why a key is refused, for the keys a reader is most likely to try.
const refusedBecause: Record<string, string> = {
  serviceAccountName: 'it would change the identity the pods run as',
  serviceAccount: 'it would change the identity the pods run as',
  automountServiceAccountToken: 'it would change the identity the pods run as',
  volumes: 'a volume can mount any Secret or a host path',
  volumeMounts: 'a volume can mount any Secret or a host path',
  volumeDevices: 'a volume can mount any Secret or a host path',
  pvcs: 'a volume can mount any Secret or a host path',
  volumeSource: 'a volume can mount any Secret or a host path',
  hostNetwork: 'host namespaces are not allowed',
  hostPID: 'host namespaces are not allowed',
  hostIPC: 'host namespaces are not allowed',
  hostUsers: 'host namespaces are not allowed',
  privileged: 'privilege is not allowed',
  runtimeClassName: 'it would change the pods\' isolation',
  initContainers: 'it would run other images',
  ephemeralContainers: 'it would run other images',
  template: 'it would replace the pod template (identity, volumes, host namespaces, privilege, images)',
  envFrom: 'it would read a whole Secret or ConfigMap with the provider\'s rights; use env with secretKeyRef or configMapKeyRef',
  envFromSecret: 'it would read a whole Secret with the provider\'s rights; use spec.model.authSecretName or env with secretKeyRef',
  imagePullSecrets: 'it names Secrets the pods would use with the provider\'s rights',
  presetOptions: 'it names Secrets and images the pods would use with the provider\'s rights',
  modelAccessSecret: 'it names a Secret the pods would use with the provider\'s rights; use spec.model.authSecretName',
  image: 'images below pod templates are not allowed; set spec.serving.image',
  nodeName: 'it would bypass the scheduler',
  serviceType: 'it would expose the Ray head (dashboard and job API) outside the cluster',
  headService: 'it would expose the Ray head (dashboard and job API) outside the cluster',
  enableIngress: 'it would expose the Ray head (dashboard and job API) outside the cluster',
};

const probe: Rule = 'value';

const container: ObjectRule = {
  keys: {
    name: 'value',
    image: 'containerImage',
    command: 'value',
    args: 'value',
    env: 'env',
    resources: 'value',
    ports: 'value',
    livenessProbe: probe,
    readinessProbe: probe,
    startupProbe: probe,
    workingDir: 'value',
    imagePullPolicy: 'value',
    securityContext: 'containerSecurityContext',
  },
};

const schedulingKeys: Record<string, Rule> = {
  tolerations: 'value',
  nodeSelector: 'value',
  affinity: 'value',
  topologySpreadConstraints: 'value',
  priorityClassName: 'value',
  schedulerName: 'value',
  terminationGracePeriodSeconds: 'value',
  securityContext: 'podSecurityContext',
};

const podMetadata: ObjectRule = { keys: { labels: 'value', annotations: 'podAnnotations' } };

/** A core/v1 PodTemplateSpec (KubeRay's head and worker groups). */
const podTemplate: ObjectRule = {
  keys: { metadata: podMetadata, spec: { keys: { ...schedulingKeys, containers: { items: container } } } },
};

/** Dynamo's component: a pod spec whose main container is a separate key. */
const dynamoComponent: ObjectRule = {
  keys: {
    replicas: 'value',
    resources: 'value',
    envs: 'env',
    sharedMemory: 'value',
    autoscaling: 'value',
    livenessProbe: probe,
    readinessProbe: probe,
    extraPodMetadata: podMetadata,
    extraPodSpec: { keys: { ...schedulingKeys, mainContainer: container } },
  },
};

const rayGroup = (extra: Record<string, Rule>): ObjectRule => ({ keys: { rayStartParams: 'value', template: podTemplate, ...extra } });
const rayHeadServiceType: OneOfRule = { oneOf: ['ClusterIP'], because: refusedBecause.serviceType };

/** The allow-list of each provider whose resource takes the overrides (vllm ignores them). */
export const PROVIDER_OVERRIDE_RULES: Partial<Record<LLMProviderName, ObjectRule>> = {
  kaito: {
    keys: {
      resource: { keys: { count: 'value', instanceType: 'value', labelSelector: 'value', preferredNodes: 'value', partition: 'value' } },
      inference: {
        keys: {
          config: 'configMapName',
          adapters: { items: { keys: { strength: 'value', source: { keys: { name: 'value', image: 'image', urls: 'value' } } } } },
          preset: { keys: { name: 'value', accessMode: 'value' } },
        },
      },
    },
  },
  dynamo: {
    keys: {
      spec: { keys: { backendFramework: 'value', envs: 'env', services: { keys: {}, anyKey: dynamoComponent } } },
    },
  },
  kuberay: {
    keys: {
      spec: {
        keys: {
          serveConfigV2: 'value',
          upgradeStrategy: 'value',
          excludeHeadPodFromServeSvc: 'value',
          serviceUnhealthySecondThreshold: 'value',
          deploymentUnhealthySecondThreshold: 'value',
          rayClusterConfig: {
            keys: {
              rayVersion: 'value',
              enableInTreeAutoscaling: 'value',
              autoscalerOptions: { keys: { idleTimeoutSeconds: 'value', upscalingMode: 'value', resources: 'value', imagePullPolicy: 'value' } },
              headGroupSpec: rayGroup({ serviceType: rayHeadServiceType }),
              workerGroupSpecs: {
                items: rayGroup({ groupName: 'value', replicas: 'value', minReplicas: 'value', maxReplicas: 'value', numOfHosts: 'value', idleTimeoutSeconds: 'value' }),
              },
            },
          },
        },
      },
    },
  },
  llmd: { keys: { spec: { keys: { priority: 'value' } } } },
};

// Annotations that loosen a container's confinement on kubelets that still read them.
const confinementAnnotations = [/^container\.apparmor\.security\.beta\.kubernetes\.io\//, /^seccomp\.security\.alpha\.kubernetes\.io\//];

export interface OverrideReview {
  readonly problems: string[];
  /** Secrets and ConfigMaps the overrides name, for the Secret guard. */
  readonly references: SecretReference[];
  /** Images the overrides make a provider pull, for the image allow-list. */
  readonly images: Array<{ readonly field: string; readonly image: string }>;
}

/**
 * Reviews `overrides` for `provider`. `servingImage` is spec.serving.image: a container image
 * below a pod template may only repeat it, so a whole container list can still be replaced.
 */
export function reviewProviderOverrides(
  provider: LLMProviderName,
  overrides: unknown,
  servingImage: string | undefined,
  field = 'spec.provider.overrides',
): OverrideReview {
  const review: OverrideReview = { problems: [], references: [], images: [] };
  const rules = PROVIDER_OVERRIDE_RULES[provider];
  if (overrides === undefined || overrides === null || !rules) return review;

  const walk = (rule: Rule, value: unknown, at: string): void => {
    if (typeof rule === 'object' && 'oneOf' in rule) {
      if (typeof value !== 'string' || !rule.oneOf.includes(value)) {
        review.problems.push(`${at}: ${JSON.stringify(value)} is not allowed (${rule.because}); use ${rule.oneOf.join(' or ')} or remove it`);
      }
      return;
    }
    if (typeof rule === 'object' && 'items' in rule) {
      if (!Array.isArray(value)) review.problems.push(`${at}: must be a list`);
      else value.forEach((item, index) => walk(rule.items, item, `${at}[${index}]`));
      return;
    }
    if (typeof rule === 'object') {
      if (!isRecord(value)) {
        review.problems.push(`${at}: must be an object`);
        return;
      }
      // In key order: the API server stores objects with sorted keys, and the messages must not depend on how the client wrote them.
      for (const [key, child] of Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
        const childRule = rule.keys[key] ?? rule.anyKey;
        const childField = `${at}.${key}`;
        if (childRule) walk(childRule, child, childField);
        else {
          const allowed = Object.keys(rule.keys);
          const because = refusedBecause[key] ? ` (${refusedBecause[key]})` : '';
          review.problems.push(
            `${childField}: is not allowed in ${provider} overrides${because}; ` +
              (allowed.length > 0 ? `here an override may set only ${allowed.join(', ')}` : 'remove it'),
          );
        }
      }
      return;
    }
    switch (rule) {
      case 'value':
        return;
      case 'env': {
        const env = envReview(value, at);
        review.problems.push(...env.problems);
        review.references.push(...env.references);
        return;
      }
      case 'containerImage':
        if (typeof value !== 'string' || servingImage === undefined || value !== servingImage) {
          review.problems.push(
            `${at}: ${refusedBecause.image}, and a container image here may only repeat it` +
              (servingImage ? ` ("${servingImage}")` : ' (spec.serving.image is not set)'),
          );
        }
        return;
      case 'image':
        if (typeof value !== 'string' || value === '') review.problems.push(`${at}: must be an image reference`);
        else review.images.push({ field: at, image: value });
        return;
      case 'configMapName':
        if (typeof value !== 'string' || value === '') review.problems.push(`${at}: must name a ConfigMap in the model's namespace`);
        else review.references.push({ name: value, field: at, resource: 'configmaps' });
        return;
      case 'podSecurityContext':
        review.problems.push(...securityContextProblems('pod', value, at));
        return;
      case 'containerSecurityContext':
        review.problems.push(...securityContextProblems('container', value, at));
        return;
      case 'podAnnotations':
        if (!isRecord(value)) review.problems.push(`${at}: must be a map of annotations`);
        else {
          for (const key of Object.keys(value)) {
            if (confinementAnnotations.some((pattern) => pattern.test(key))) {
              review.problems.push(`${at}.${key}: is not allowed (it sets the pods' AppArmor or seccomp confinement); remove it`);
            }
          }
        }
        return;
    }
  };
  walk(rules, overrides, field);
  return review;
}
