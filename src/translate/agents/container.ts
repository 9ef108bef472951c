// The container backend of AgentDeployment: a Deployment (or a Job), a Service, and a ConfigMap
// with the agent's configuration, with the bound model injected as environment variables in the
// dialect the agent speaks (OPENAI_*, ANTHROPIC_* or AZURE_OPENAI_*) plus OTEL_EXPORTER_OTLP_*.
// The API key always comes from a Secret reference, never as a literal value.
import { AGENTDEPLOYMENT_DEFAULTS } from '../../api/agentdeployment';
import type { ExternalAPIType } from '../../api/agentdeployment';
import { translationError, TranslationError } from '../gateway/errors';
import { boundedName } from '../gateway/names';
import type { Manifest } from '../providers/provider';
import { AGENTDEPLOYMENT_V1BETA1_DEFAULTS, type AgentDeploymentV1beta1 } from '../../api/v1beta1';

/** The model an agent is bound to, after the operator resolved it. */
export interface ResolvedModelBinding {
  readonly bindingMode: 'modelRef' | 'externalAPI';
  readonly apiType: ExternalAPIType;
  readonly baseURL: string;
  readonly modelName: string;
  /** Secret and key holding the API key the agent sends. */
  readonly credentialsRef?: { readonly name: string; readonly key: string };
  /** Client ID of the key in credentialsRef (modelRef): a new key rolls the Deployment's pods, which read it at start. */
  readonly credentialsVersion?: string;
  readonly observedResourceUID?: string;
}

export const AGENT_CONFIG_MOUNT = '/etc/nebari-llm-serving';
export const AGENT_CONFIG_FILE = 'agent.json';
/** Pod template annotation of a Deployment agent: the client ID of the key its pods use. */
export const ANNOTATION_POD_KEY_CLIENT_ID = 'llm.nebari.dev/model-key-client-id';

export function agentObjectNames(agentName: string) {
  return {
    workload: agentName,
    service: agentName,
    config: boundedName(agentName, 'config'),
    /** Secret with the key the operator minted for a modelRef binding (owned by the agent). */
    modelCredentials: boundedName(agentName, 'model-key'),
  };
}

/** Environment variable names per API dialect. */
export function modelEnvNames(apiType: ExternalAPIType): { baseURL: string; model: string; apiKey: string } {
  switch (apiType) {
    case 'anthropic':
      return { baseURL: 'ANTHROPIC_BASE_URL', model: 'ANTHROPIC_MODEL', apiKey: 'ANTHROPIC_API_KEY' };
    case 'azureOpenAI':
      return { baseURL: 'AZURE_OPENAI_ENDPOINT', model: 'AZURE_OPENAI_DEPLOYMENT', apiKey: 'AZURE_OPENAI_API_KEY' };
    default:
      return { baseURL: 'OPENAI_BASE_URL', model: 'OPENAI_MODEL', apiKey: 'OPENAI_API_KEY' };
  }
}

export function modelEnv(binding: ResolvedModelBinding): Array<Record<string, unknown>> {
  const names = modelEnvNames(binding.apiType);
  return [
    { name: names.baseURL, value: binding.baseURL },
    { name: names.model, value: binding.modelName },
    ...(binding.credentialsRef ? [{ name: names.apiKey, valueFrom: { secretKeyRef: { name: binding.credentialsRef.name, key: binding.credentialsRef.key } } }] : []),
  ];
}

function labels(agent: AgentDeploymentV1beta1): Record<string, string> {
  return {
    'app.kubernetes.io/component': 'agent',
    'app.kubernetes.io/instance': boundedName(agent.metadata.name ?? ''),
    'app.kubernetes.io/managed-by': 'nebari-llm-serving',
    'app.kubernetes.io/name': 'nebari-llm-serving',
    'llm.nebari.dev/agent': boundedName(agent.metadata.name ?? ''),
  };
}

function metadata(agent: AgentDeploymentV1beta1, name: string) {
  const { uid } = agent.metadata;
  return {
    name,
    namespace: agent.metadata.namespace ?? '',
    labels: labels(agent),
    ...(uid ? { ownerReferences: [{ apiVersion: agent.apiVersion, kind: 'AgentDeployment', name: agent.metadata.name ?? '', uid, controller: true, blockOwnerDeletion: true }] } : {}),
  };
}

export interface AgentTranslation {
  readonly objects: Manifest[];
  readonly workload: { apiVersion: string; kind: 'Deployment' | 'Job'; name: string };
  readonly address?: string;
  readonly errors: TranslationError[];
}

/** The objects that run `agent` bound to `binding`. */
export function desiredAgentObjects(agent: AgentDeploymentV1beta1, binding: ResolvedModelBinding): AgentTranslation {
  const spec = agent.spec;
  const name = agent.metadata.name ?? '';
  const names = agentObjectNames(name);
  const lifecycle = spec.lifecycle ?? AGENTDEPLOYMENT_DEFAULTS.lifecycle;
  const workload = lifecycle === 'job' ? { apiVersion: 'batch/v1', kind: 'Job' as const, name: names.workload } : { apiVersion: 'apps/v1', kind: 'Deployment' as const, name: names.workload };
  const container = spec.container ?? {};
  if (!container.image) {
    const field = spec.framework ? 'spec.framework.name' : 'spec.container.image';
    return { objects: [], workload, errors: [translationError(field, spec.framework ? `framework "${spec.framework.name}" is not registered with this operator; set spec.container.image to run the agent container directly` : 'is required; set the agent container image')] };
  }
  const port = spec.port ?? AGENTDEPLOYMENT_DEFAULTS.port;
  const otlp = spec.observability?.otlp;
  const env = [
    ...modelEnv(binding),
    ...(otlp
      ? [
          { name: 'OTEL_EXPORTER_OTLP_ENDPOINT', value: otlp.endpoint },
          { name: 'OTEL_EXPORTER_OTLP_PROTOCOL', value: otlp.protocol ?? AGENTDEPLOYMENT_V1BETA1_DEFAULTS.otlpProtocol },
          { name: 'OTEL_SERVICE_NAME', value: name },
        ]
      : []),
    { name: 'AGENT_CONFIG', value: `${AGENT_CONFIG_MOUNT}/${AGENT_CONFIG_FILE}` },
    ...((container.env ?? []) as Array<Record<string, unknown>>),
  ];
  // The config file carries the binding without any credential, so it is safe in a ConfigMap.
  const configJson = JSON.stringify(
    { name, model: { bindingMode: binding.bindingMode, apiType: binding.apiType, baseURL: binding.baseURL, modelName: binding.modelName }, config: spec.config ?? {} },
    null,
    2,
  );
  const podLabels = labels(agent);
  const podSpec = {
    containers: [
      {
        name: 'agent',
        image: container.image,
        ...(container.command ? { command: container.command } : {}),
        ...(container.args ? { args: container.args } : {}),
        env,
        ...(lifecycle === 'deployment' ? { ports: [{ name: 'http', containerPort: port, protocol: 'TCP' }] } : {}),
        ...(container.resources ? { resources: container.resources } : {}),
        volumeMounts: [{ name: 'config', mountPath: AGENT_CONFIG_MOUNT, readOnly: true }],
        securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
      },
    ],
    volumes: [{ name: 'config', configMap: { name: names.config } }],
    ...(lifecycle === 'job' ? { restartPolicy: 'Never' } : {}),
  };
  const objects: Manifest[] = [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: metadata(agent, names.config), data: { [AGENT_CONFIG_FILE]: configJson } }];
  if (lifecycle === 'job') {
    objects.push({ apiVersion: workload.apiVersion, kind: workload.kind, metadata: metadata(agent, names.workload), spec: { backoffLimit: 3, template: { metadata: { labels: podLabels }, spec: podSpec } } });
    return { objects, workload, errors: [] };
  }
  objects.push({
    apiVersion: workload.apiVersion,
    kind: workload.kind,
    metadata: metadata(agent, names.workload),
    spec: {
      replicas: spec.replicas ?? AGENTDEPLOYMENT_DEFAULTS.replicas,
      selector: { matchLabels: podLabels },
      // A Job's template cannot change, so only a Deployment rolls to a rotated key.
      template: { metadata: { labels: podLabels, ...(binding.credentialsVersion ? { annotations: { [ANNOTATION_POD_KEY_CLIENT_ID]: binding.credentialsVersion } } : {}) }, spec: podSpec },
    },
  });
  objects.push({ apiVersion: 'v1', kind: 'Service', metadata: metadata(agent, names.service), spec: { selector: podLabels, ports: [{ name: 'http', port, targetPort: port, protocol: 'TCP' }] } });
  return { objects, workload, address: `http://${names.service}.${agent.metadata.namespace}.svc:${port}`, errors: [] };
}
