// The allow-list of spec.provider.overrides, the image allow-list and the valueFrom review, as
// data tables: each row is an override (or env list) and what the review must say about it.
import type { LLMProviderName } from '../../../src/api/llmmodel';
import { allowedImageEntryProblem, imageAllowed, imageProblem } from '../../../src/webhook/image-policy';
import { envReview } from '../../../src/webhook/pod-references';
import { reviewProviderOverrides } from '../../../src/webhook/provider-overrides';

const rayHeadSpec = (spec: Record<string, unknown>) => ({ spec: { rayClusterConfig: { headGroupSpec: { template: { spec } } } } });
const rayWorkerSpec = (spec: Record<string, unknown>) => ({ spec: { rayClusterConfig: { workerGroupSpecs: [{ groupName: 'gpu-workers', template: { spec } }] } } });
const dynamoWorker = (component: Record<string, unknown>) => ({ spec: { services: { VllmWorker: component } } });

describe('provider overrides: refused below pod templates (the issue\'s reproductions and their kin)', () => {
  it.each<[string, LLMProviderName, unknown, string]>([
    ['kuberay serviceAccountName', 'kuberay', rayHeadSpec({ serviceAccountName: 'nls-operator' }), 'spec.provider.overrides.spec.rayClusterConfig.headGroupSpec.template.spec.serviceAccountName: is not allowed in kuberay overrides (it would change the identity the pods run as)'],
    ['kuberay automountServiceAccountToken', 'kuberay', rayWorkerSpec({ automountServiceAccountToken: true }), 'workerGroupSpecs[0].template.spec.automountServiceAccountToken: is not allowed in kuberay overrides (it would change the identity'],
    ['kuberay Secret volume', 'kuberay', rayHeadSpec({ volumes: [{ name: 's', secret: { secretName: 'nls-portal-session' } }] }), 'headGroupSpec.template.spec.volumes: is not allowed in kuberay overrides (a volume can mount any Secret or a host path)'],
    ['kuberay hostNetwork', 'kuberay', rayHeadSpec({ hostNetwork: true }), 'headGroupSpec.template.spec.hostNetwork: is not allowed in kuberay overrides (host namespaces are not allowed)'],
    ['kuberay hostPID', 'kuberay', rayWorkerSpec({ hostPID: true }), 'template.spec.hostPID: is not allowed'],
    ['kuberay hostIPC', 'kuberay', rayWorkerSpec({ hostIPC: true }), 'template.spec.hostIPC: is not allowed'],
    ['kuberay privileged container', 'kuberay', rayHeadSpec({ containers: [{ name: 'ray-head', securityContext: { privileged: true } }] }), 'containers[0].securityContext.privileged: is not allowed; securityContext overrides may only set'],
    ['kuberay added capabilities', 'kuberay', rayHeadSpec({ containers: [{ name: 'ray-head', securityContext: { capabilities: { add: ['SYS_ADMIN'] } } }] }), 'containers[0].securityContext.capabilities: only drop is allowed'],
    ['kuberay another image', 'kuberay', rayHeadSpec({ containers: [{ name: 'ray-head', image: 'attacker.example/ray:1' }] }), 'containers[0].image: images below pod templates are not allowed; set spec.serving.image'],
    ['kuberay volumeMounts', 'kuberay', rayHeadSpec({ containers: [{ name: 'ray-head', volumeMounts: [{ name: 'x', mountPath: '/x' }] }] }), 'containers[0].volumeMounts: is not allowed in kuberay overrides (a volume can mount'],
    ['kuberay envFrom', 'kuberay', rayHeadSpec({ containers: [{ name: 'ray-head', envFrom: [{ secretRef: { name: 'x' } }] }] }), 'containers[0].envFrom: is not allowed'],
    ['kuberay initContainers', 'kuberay', rayHeadSpec({ initContainers: [{ name: 'x', image: 'busybox' }] }), 'template.spec.initContainers: is not allowed in kuberay overrides (it would run other images)'],
    ['kuberay head serviceType', 'kuberay', { spec: { rayClusterConfig: { headGroupSpec: { serviceType: 'LoadBalancer' } } } }, 'headGroupSpec.serviceType: "LoadBalancer" is not allowed (it would expose the Ray head (dashboard and job API) outside the cluster); use ClusterIP or remove it'],
    ['kuberay head service', 'kuberay', { spec: { rayClusterConfig: { headGroupSpec: { headService: { spec: { type: 'NodePort' } } } } } }, 'headGroupSpec.headService: is not allowed in kuberay overrides (it would expose the Ray head'],
    ['kuberay autoscaler image', 'kuberay', { spec: { rayClusterConfig: { autoscalerOptions: { image: 'attacker.example/x' } } } }, 'autoscalerOptions.image: is not allowed'],
    ['kuberay Unconfined seccomp', 'kuberay', rayHeadSpec({ securityContext: { seccompProfile: { type: 'Unconfined' } } }), 'template.spec.securityContext.seccompProfile: only type RuntimeDefault or Localhost'],
    ['kuberay AppArmor annotation', 'kuberay', { spec: { rayClusterConfig: { headGroupSpec: { template: { metadata: { annotations: { 'container.apparmor.security.beta.kubernetes.io/ray-head': 'unconfined' } } } } } } }, 'is not allowed (it sets the pods\' AppArmor or seccomp confinement)'],
    ['dynamo serviceAccountName', 'dynamo', dynamoWorker({ extraPodSpec: { serviceAccountName: 'nls-operator' } }), 'spec.provider.overrides.spec.services.VllmWorker.extraPodSpec.serviceAccountName: is not allowed in dynamo overrides (it would change the identity'],
    ['dynamo Secret volume', 'dynamo', dynamoWorker({ extraPodSpec: { volumes: [{ name: 's', secret: { secretName: 'x' } }] } }), 'extraPodSpec.volumes: is not allowed in dynamo overrides (a volume can mount'],
    ['dynamo hostNetwork', 'dynamo', dynamoWorker({ extraPodSpec: { hostNetwork: true } }), 'extraPodSpec.hostNetwork: is not allowed in dynamo overrides (host namespaces'],
    ['dynamo main container image', 'dynamo', dynamoWorker({ extraPodSpec: { mainContainer: { image: 'attacker.example/x' } } }), 'mainContainer.image: images below pod templates are not allowed'],
    ['dynamo envFromSecret', 'dynamo', dynamoWorker({ envFromSecret: 'nls-portal-session' }), 'VllmWorker.envFromSecret: is not allowed in dynamo overrides (it would read a whole Secret'],
    ['dynamo pvcs', 'dynamo', { spec: { pvcs: [{ name: 'x' }] } }, 'spec.provider.overrides.spec.pvcs: is not allowed in dynamo overrides (a volume can mount'],
    ['dynamo volumeMounts', 'dynamo', dynamoWorker({ volumeMounts: [{ name: 'x' }] }), 'VllmWorker.volumeMounts: is not allowed'],
    ['kaito pod template', 'kaito', { inference: { template: { spec: { serviceAccountName: 'nls-operator', hostNetwork: true } } } }, 'spec.provider.overrides.inference.template: is not allowed in kaito overrides (it would replace the pod template'],
    ['kaito modelAccessSecret', 'kaito', { inference: { preset: { presetOptions: { modelAccessSecret: 'nls-portal-session' } } } }, 'inference.preset.presetOptions: is not allowed in kaito overrides (it names Secrets'],
    ['kaito adapter pull secret', 'kaito', { inference: { adapters: [{ source: { name: 'a', imagePullSecrets: ['x'] } }] } }, 'adapters[0].source.imagePullSecrets: is not allowed'],
    ['kaito adapter volume', 'kaito', { inference: { adapters: [{ source: { name: 'a', volumeSource: { secret: { secretName: 'x' } } } }] } }, 'adapters[0].source.volumeSource: is not allowed'],
    ['kaito tuning', 'kaito', { tuning: {} }, 'spec.provider.overrides.tuning: is not allowed in kaito overrides; here an override may set only resource, inference'],
    ['llmd poolRef', 'llmd', { spec: { poolRef: { name: 'other' } } }, 'spec.provider.overrides.spec.poolRef: is not allowed in llmd overrides; here an override may set only priority'],
  ])('%s', (_case, provider, overrides, message) => {
    const review = reviewProviderOverrides(provider, overrides, undefined);
    expect(review.problems.join('\n')).toContain(message);
  });
});

describe('provider overrides: the documented uses stay allowed', () => {
  it.each<[string, LLMProviderName, unknown]>([
    ['kaito instance type, preferred nodes, labels', 'kaito', { resource: { instanceType: 'Standard_NC24ads_A100_v4', preferredNodes: ['n1'], labelSelector: { matchLabels: { pool: 'gpu' } } } }],
    ['kaito adapters', 'kaito', { inference: { adapters: [{ source: { name: 'lora', image: 'registry.example.com/lora:1' }, strength: '0.5' }] } }],
    ['dynamo envs, replicas, shared memory, grace period', 'dynamo', { spec: { envs: [{ name: 'DYN_LOG', value: 'debug' }], services: { Frontend: { replicas: 2 }, VllmWorker: { sharedMemory: { size: '16Gi' }, extraPodSpec: { terminationGracePeriodSeconds: 120 } } } } }],
    ['dynamo main container args', 'dynamo', dynamoWorker({ extraPodSpec: { mainContainer: { args: ['--model', 'x'] } } })],
    ['kuberay upgrade strategy, autoscaler, rayStartParams', 'kuberay', { spec: { upgradeStrategy: { type: 'None' }, rayClusterConfig: { autoscalerOptions: { idleTimeoutSeconds: 120 }, headGroupSpec: { rayStartParams: { 'num-cpus': '1' } } } } }],
    ['kuberay a ClusterIP head Service', 'kuberay', { spec: { rayClusterConfig: { headGroupSpec: { serviceType: 'ClusterIP' } } } }],
    ['kuberay the whole head container list, repeating spec.serving.image', 'kuberay', rayHeadSpec({ containers: [{ name: 'ray-head', image: 'rayproject/ray-llm:2.52.0', resources: { limits: { memory: '16Gi' } } }] })],
    ['kuberay hardening security context', 'kuberay', rayHeadSpec({ securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } } })],
    ['llmd priority', 'llmd', { spec: { priority: 10 } }],
  ])('%s', (_case, provider, overrides) => {
    expect(reviewProviderOverrides(provider, overrides, 'rayproject/ray-llm:2.52.0').problems).toEqual([]);
  });

  it('hands Secret and ConfigMap references in overrides to the Secret guard', () => {
    const dynamo = reviewProviderOverrides('dynamo', { spec: { envs: [{ name: 'K', valueFrom: { secretKeyRef: { name: 'provider-key', key: 'k' } } }] } }, undefined);
    expect(dynamo.references).toEqual([{ name: 'provider-key', field: 'spec.provider.overrides.spec.envs[0].valueFrom.secretKeyRef.name', resource: 'secrets' }]);
    const kaito = reviewProviderOverrides('kaito', { inference: { config: 'vllm-flags' } }, undefined);
    expect(kaito.references).toEqual([{ name: 'vllm-flags', field: 'spec.provider.overrides.inference.config', resource: 'configmaps' }]);
  });

  it('hands KAITO adapter images to the image allow-list', () => {
    const review = reviewProviderOverrides('kaito', { inference: { adapters: [{ source: { name: 'a', image: 'attacker.example/lora' } }] } }, undefined);
    expect(review.images).toEqual([{ field: 'spec.provider.overrides.inference.adapters[0].source.image', image: 'attacker.example/lora' }]);
  });

  it('ignores the vllm provider, whose Deployment takes no overrides', () => {
    expect(reviewProviderOverrides('vllm', { anything: true }, undefined)).toEqual({ problems: [], references: [], images: [] });
  });
});

describe('env valueFrom review', () => {
  it('hands secretKeyRef and configMapKeyRef to the Secret guard and lets the pod\'s own fields through', () => {
    const review = envReview(
      [
        { name: 'A', value: 'x' },
        { name: 'B', valueFrom: { secretKeyRef: { name: 'nls-portal-session', key: 'key' } } },
        { name: 'C', valueFrom: { configMapKeyRef: { name: 'nls-key-audit-2026-01-01', key: 'entries' } } },
        { name: 'D', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
        { name: 'E', valueFrom: { resourceFieldRef: { resource: 'limits.memory' } } },
      ],
      'spec.serving.env',
    );
    expect(review.problems).toEqual([]);
    expect(review.references).toEqual([
      { name: 'nls-portal-session', field: 'spec.serving.env[1].valueFrom.secretKeyRef.name', resource: 'secrets' },
      { name: 'nls-key-audit-2026-01-01', field: 'spec.serving.env[2].valueFrom.configMapKeyRef.name', resource: 'configmaps' },
    ]);
  });

  it.each([
    ['a kind that cannot be reviewed', { fileKeyRef: { volumeName: 'v', path: 'p', key: 'k' } }, 'spec.serving.env[0].valueFrom.fileKeyRef: cannot be checked against the requesting user\'s rights, so it is not allowed; use secretKeyRef or configMapKeyRef (both reviewed as you), fieldRef or resourceFieldRef, or a plain value'],
    ['a secretKeyRef without a name', { secretKeyRef: { key: 'k' } }, 'spec.serving.env[0].valueFrom.secretKeyRef.name: is required; name the Secret in the object\'s namespace'],
    ['a valueFrom that is not an object', 'x', 'spec.serving.env[0].valueFrom: must be an object; use secretKeyRef or configMapKeyRef (both reviewed as you), fieldRef or resourceFieldRef, or a plain value'],
  ])('refuses %s', (_case, valueFrom, message) => {
    expect(envReview([{ name: 'A', valueFrom }], 'spec.serving.env').problems).toEqual([message]);
  });
});

describe('image allow-list', () => {
  it.each([
    [[], 'anything.example/x:1', true],
    [['registry.example.com/'], 'registry.example.com/vllm/vllm-openai:v0.10.0', true],
    [['registry.example.com/'], 'registry.example.com.attacker.example/vllm:1', false],
    [['vllm/vllm-openai:'], 'vllm/vllm-openai:v0.10.0', true],
    [['vllm/vllm-openai:'], 'vllm/vllm-openai-evil:v1', false],
    [['vllm/vllm-openai@'], 'vllm/vllm-openai@sha256:abc', true],
    [['vllm/vllm-openai:v0.10.0'], 'vllm/vllm-openai:v0.10.0', true],
    [['vllm/vllm-openai:v0.10.0'], 'vllm/vllm-openai:v0.10.0-evil', false],
    [['registry.example.com'], 'registry.example.com/x', false],
  ])('%j allows %s: %s', (allowed, image, expected) => {
    expect(imageAllowed(image, allowed)).toBe(expected);
  });

  it('names the field, the list and the chart value when it refuses', () => {
    expect(imageProblem('attacker.example/x:1', 'spec.serving.image', ['registry.example.com/'])).toBe(
      'spec.serving.image: image "attacker.example/x:1" is not allowed by this installation (allowed: "registry.example.com/"); use an image from those, or ask an administrator to add it to the chart value webhook.allowedImages',
    );
  });

  it('refuses entries that cannot be an image prefix', () => {
    expect(allowedImageEntryProblem('a b')).toContain('has whitespace');
    expect(allowedImageEntryProblem('registry.example.com/')).toBeUndefined();
  });
});
