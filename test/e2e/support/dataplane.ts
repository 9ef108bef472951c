// The data plane as a platform team installs it next to the chart: CoreDNS as the node's cluster
// DNS, Envoy Gateway v1.8.1 and the AI Gateway v1.1.0 controller from their upstream Helm charts,
// Envoy 1.38 in the proxy pods Envoy Gateway creates (with the AI Gateway's extproc sidecar), the
// rate-limit service Envoy Gateway deploys for quotas (with Debian's redis-server on the node
// address as its backend), and the Gateways the models attach to. Every program is the real one, built by
// scripts/build-tools.sh, in images this file assembles with crane and pushes to the suite's
// registry. Addresses live only inside the run's network namespace.
import { execFile, execFileSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { parseDocument } from 'yaml';
import type { KubeObject } from '../../../src/kube/rest';
import { issueCertificateAuthority, issueServingCertificate, type KeyPair } from '../../../src/webhook/certificates';
import { NODE_ADDRESS } from '../../support/node';
import { type ManagedProcess, startProcess, waitFor } from '../../support/processes';
import { repoRoot, toolPaths } from '../../support/tools';
import { admin, helmOk, pods, waitForReadyPods } from './e2e';
import { e2eState } from './state';

export const EG_NAMESPACE = 'envoy-gateway-system';
export const AIGW_NAMESPACE = 'envoy-ai-gateway-system';
/** The kubelet's `clusterDNS` (test/support/node.ts). */
const CLUSTER_DNS_IP = '10.96.0.10';

/**
 * The data plane's CA: the proxies' image trusts it for providers, and the Gateways' certificate
 * comes from it. Made once per run and kept in the run's directory, so the files that run after
 * dataplane.test.ts on its data plane can sign stand-ins of their own.
 */
export function dataPlaneCa(): KeyPair {
  const file = path.join(e2eState().dir, 'dataplane-ca.json');
  if (fs.existsSync(file)) return JSON.parse(fs.readFileSync(file, 'utf8')) as KeyPair;
  const ca = issueCertificateAuthority({ commonName: 'nls e2e data plane CA' });
  fs.writeFileSync(file, JSON.stringify(ca), { mode: 0o600 });
  return ca;
}

export interface DataPlaneImages {
  readonly envoyGateway: string;
  readonly envoy: string;
  readonly aigwController: string;
  readonly extproc: string;
  readonly epp: string;
  readonly coredns: string;
  readonly ratelimit: string;
}

function crane(args: string[]): string {
  return execFileSync(toolPaths().crane, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

/** A layer tar holding `files` (path in image → source file or text), owned by root. */
function layer(dir: string, name: string, files: Record<string, { from?: string; text?: string; mode: number }>): string {
  const stage = path.join(dir, `${name}-root`);
  for (const [dest, spec] of Object.entries(files)) {
    const target = path.join(stage, dest);
    fs.mkdirSync(path.dirname(target), { recursive: true });
    if (spec.from) fs.copyFileSync(spec.from, target);
    else fs.writeFileSync(target, spec.text ?? '');
    fs.chmodSync(target, spec.mode);
  }
  const tar = path.join(dir, `${name}.tar`);
  execFileSync('tar', ['--owner=0', '--group=0', '--numeric-owner', '--sort=name', '-C', stage, '-cf', tar, '.']);
  return tar;
}

/**
 * The data plane's images, each one program on top of the operator image (Debian's glibc, CA
 * bundle and a non-root user; Envoy needs glibc). Envoy's system trust is Debian's bundle plus the
 * suite's CA, because the stand-in providers and issuer are signed by it and the chart's
 * BackendTLSPolicies trust the system CAs, as they do for real providers.
 */
export function pushDataPlaneImages(registry: string, ca: KeyPair, systemBundle: string): DataPlaneImages {
  const state = e2eState();
  const tools = toolPaths();
  const base = `${state.images.operator.repository}:${state.version}`;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nls-e2e-dp-images-'));
  const env = ['--env', 'PATH=/usr/local/bin:/usr/bin:/bin'];
  const image = (name: string, files: Parameters<typeof layer>[2], entrypoint: string): string => {
    const ref = `${registry}/e2e/${name}:1`;
    crane(['append', '--platform', 'linux/amd64', '-b', base, '-f', layer(dir, name, files), '-t', `${ref}-wip`]);
    // The base's working directory is the operator's /app; these programs start from /.
    crane(['mutate', `${ref}-wip`, '-t', ref, '--entrypoint', entrypoint, '--workdir', '/', ...env]);
    return ref;
  };
  try {
    return {
      envoyGateway: image('envoy-gateway', { 'usr/local/bin/envoy-gateway': { from: tools.envoyGateway, mode: 0o755 } }, '/usr/local/bin/envoy-gateway'),
      envoy: image('envoy', {
        'usr/local/bin/envoy': { from: tools.envoy, mode: 0o755 },
        'etc/ssl/certs/ca-certificates.crt': { text: `${systemBundle.trimEnd()}\n${ca.certPem}`, mode: 0o644 },
      }, '/usr/local/bin/envoy'),
      aigwController: image('aigw-controller', { 'usr/local/bin/aigw-controller': { from: tools.aigwController, mode: 0o755 } }, '/usr/local/bin/aigw-controller'),
      extproc: image('aigw-extproc', { 'usr/local/bin/aigw-extproc': { from: tools.aigwExtproc, mode: 0o755 } }, '/usr/local/bin/aigw-extproc'),
      epp: image('epp', { 'usr/local/bin/epp': { from: tools.epp, mode: 0o755 } }, '/usr/local/bin/epp'),
      coredns: image('coredns', { 'usr/local/bin/coredns': { from: tools.coredns, mode: 0o755 } }, '/usr/local/bin/coredns'),
      // Envoy Gateway runs the rate-limit container as /bin/ratelimit.
      ratelimit: image('ratelimit', { 'bin/ratelimit': { from: tools.ratelimit, mode: 0o755 } }, '/bin/ratelimit'),
    };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function applyAll(objects: KubeObject[]): Promise<void> {
  for (const o of objects) await admin().apply(o as never, { fieldManager: 'e2e-platform', force: true });
}

/**
 * CoreDNS as the cluster DNS (Service `kube-system/kube-dns` at the kubelet's clusterDNS), serving
 * the cluster's names and `hosts` (name → address) for the stand-ins on the node address. No
 * forwarding: nothing resolves to the outside.
 */
export async function installCoreDns(image: string, hosts: string[]): Promise<void> {
  const ns = 'kube-system';
  const labels = { 'k8s-app': 'kube-dns' };
  const corefile = [
    '.:1053 {',
    '    errors',
    '    ready :8181',
    '    hosts {',
    ...hosts.map((h) => `        ${NODE_ADDRESS} ${h}`),
    '        fallthrough',
    '    }',
    '    kubernetes cluster.local in-addr.arpa ip6.arpa {',
    '        pods insecure',
    '        fallthrough in-addr.arpa ip6.arpa',
    '    }',
    '    cache 5',
    '}',
  ].join('\n');
  await applyAll([
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'coredns', namespace: ns } },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'e2e-coredns' },
      rules: [
        { apiGroups: [''], resources: ['endpoints', 'services', 'pods', 'namespaces'], verbs: ['list', 'watch'] },
        { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: ['list', 'watch'] },
      ],
    } as KubeObject,
    {
      apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'e2e-coredns' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'e2e-coredns' },
      subjects: [{ kind: 'ServiceAccount', name: 'coredns', namespace: ns }],
    } as KubeObject,
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'coredns', namespace: ns }, data: { Corefile: corefile } } as KubeObject,
    {
      apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'coredns', namespace: ns, labels },
      spec: {
        replicas: 1,
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: {
            serviceAccountName: 'coredns',
            dnsPolicy: 'Default',
            securityContext: { runAsNonRoot: true, runAsUser: 65532, seccompProfile: { type: 'RuntimeDefault' } },
            containers: [{
              name: 'coredns', image, args: ['-conf', '/etc/coredns/Corefile'],
              ports: [{ name: 'dns', containerPort: 1053, protocol: 'UDP' }, { name: 'dns-tcp', containerPort: 1053, protocol: 'TCP' }],
              readinessProbe: { httpGet: { path: '/ready', port: 8181 }, periodSeconds: 1 },
              securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
              volumeMounts: [{ name: 'config', mountPath: '/etc/coredns', readOnly: true }],
            }],
            volumes: [{ name: 'config', configMap: { name: 'coredns' } }],
          },
        },
      },
    } as KubeObject,
    {
      apiVersion: 'v1', kind: 'Service', metadata: { name: 'kube-dns', namespace: ns, labels },
      spec: {
        clusterIP: CLUSTER_DNS_IP, selector: labels,
        ports: [{ name: 'dns', port: 53, targetPort: 1053, protocol: 'UDP' }, { name: 'dns-tcp', port: 53, targetPort: 1053, protocol: 'TCP' }],
      },
    } as KubeObject,
  ]);
  await waitForReadyPods('k8s-app=kube-dns', 1, 120000, ns);
}

/** Where `go` keeps a module pinned in tools/<module>/go.mod (its Helm charts live there). */
function moduleDir(toolsModule: string, modulePath: string): string {
  return execFileSync('go', ['list', '-m', '-f', '{{.Dir}}', modulePath], { cwd: path.join(repoRoot, 'tools', toolsModule), encoding: 'utf8' }).trim();
}

/**
 * Envoy Gateway from its chart inside the pinned module, with the values upstream's release writes
 * into `values.tmpl.yaml` (our image) and the AI Gateway's recommended configuration
 * (`manifests/envoy-gateway-values.yaml`) plus InferencePool backends, as the AI Gateway's
 * install guide layers them; with `redisUrl`, the global rate-limit backend quotas need. CRDs are
 * already installed from ../shared/upstream-crds. `tuning`: the benchmarks' departures from those
 * values (docs/performance.md).
 */
export async function installEnvoyGateway(images: DataPlaneImages, workDir: string, redisUrl?: string, tuning: EnvoyGatewayTuning = {}): Promise<void> {
  const module = moduleDir('envoy-gateway', 'github.com/envoyproxy/gateway');
  const version = path.basename(module).replace(/^gateway@/, '');
  const chart = path.join(workDir, 'gateway-helm');
  fs.cpSync(path.join(module, 'charts', 'gateway-helm'), chart, { recursive: true });
  execFileSync('chmod', ['-R', 'u+w', chart]);
  const template = fs.readFileSync(path.join(chart, 'values.tmpl.yaml'), 'utf8');
  fs.writeFileSync(path.join(chart, 'values.yaml'), template.replace('${GatewayImage}', images.envoyGateway).replace('${GatewayImagePullPolicy}', 'IfNotPresent'));
  const chartYaml = parseDocument(fs.readFileSync(path.join(chart, 'Chart.yaml'), 'utf8'));
  chartYaml.set('version', version);
  chartYaml.set('appVersion', version);
  fs.writeFileSync(path.join(chart, 'Chart.yaml'), chartYaml.toString());
  const inferencePool = path.join(workDir, 'envoy-gateway-inference-pool.yaml');
  fs.writeFileSync(inferencePool, [
    'config:',
    '  envoyGateway:',
    '    extensionManager:',
    '      backendResources:',
    '        - group: inference.networking.k8s.io',
    '          kind: InferencePool',
    '          version: v1',
    '',
  ].join('\n'));
  await helmOk(4, [
    'install', 'eg', chart, '-n', EG_NAMESPACE, '--create-namespace', '--skip-crds', '--wait', '--timeout', '4m',
    '-f', path.join(aiGatewaySource(), 'manifests', 'envoy-gateway-values.yaml'), '-f', inferencePool,
    '--set', `global.images.envoyProxy.image=${images.envoy}`,
    ...(redisUrl ? ['--set', `global.images.ratelimit.image=${images.ratelimit}`, '--set', 'config.envoyGateway.rateLimit.backend.type=Redis', '--set', `config.envoyGateway.rateLimit.backend.redis.url=${redisUrl}`] : []),
    ...(tuning.extensionMessageMiB ? ['--set', `config.envoyGateway.extensionManager.maxMessageSize=${tuning.extensionMessageMiB}Mi`] : []),
    ...(tuning.logLevel ? ['--set', `config.envoyGateway.logging.level.default=${tuning.logLevel}`] : []),
  ]);
}

/** Envoy Gateway settings a benchmark may change from the values above. */
export interface EnvoyGatewayTuning {
  /** The largest message to and from the AI Gateway's extension server, MiB (4 by default on both sides). */
  readonly extensionMessageMiB?: number;
  /** The level of every logger (`info` in the AI Gateway's recommended values). */
  readonly logLevel?: 'debug' | 'info' | 'warn' | 'error';
}

/** Port of the quotas' Redis on the node address. */
export const REDIS_PORT = 6379;
/**
 * The name pods reach it by (give it to installCoreDns): Envoy Gateway refuses an IP address as
 * `rateLimit.backend.redis.url` (it parses the value as a URL, where `10.0.0.1:6379` is not one).
 */
export const REDIS_HOST = 'redis.e2e.test';

/**
 * Debian's redis-server on the node address, the counters' store of the rate-limit service (what
 * a platform team points `rateLimit.backend` at); nothing saved to disk. Returns `host:port`.
 */
export async function startRedis(logDir: string): Promise<{ url: string; process: ManagedProcess; keys: () => Promise<string> }> {
  const redis = startProcess('redis-server', 'redis-server', [
    '--bind', NODE_ADDRESS, '--port', String(REDIS_PORT), '--protected-mode', 'no', '--save', '', '--appendonly', 'no', '--dir', logDir,
  ], { logDir });
  await waitFor('redis-server listening', async () => {
    if (redis.child.exitCode !== null) throw new Error(`redis-server exited: ${redis.logTail()}`);
    return redis.logTail().includes('Ready to accept connections');
  }, { timeoutMs: 30000, intervalMs: 200 });
  // The counters the rate-limit service keeps, for a failing test's message.
  const keys = () => new Promise<string>((resolve, reject) => execFile('redis-cli', ['-h', NODE_ADDRESS, '-p', String(REDIS_PORT), '--scan'], { encoding: 'utf8' }, (err, out) => (err ? reject(err) : resolve(out.trim()))));
  return { url: `${REDIS_HOST}:${REDIS_PORT}`, process: redis, keys };
}

/** The AI Gateway's unpacked source (scripts/build-tools.sh), which holds its Helm chart. */
export function aiGatewaySource(): string {
  return toolPaths().aiGatewaySource;
}

/**
 * The AI Gateway controller from its chart in the tagged source. The chart makes its webhook
 * certificate itself (Helm's genCA) unless cert-manager is enabled.
 */
/** Static AWS credentials for Bedrock requests: what IRSA or Pod Identity give a real extproc. */
export interface AwsCredentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
}

/**
 * The AI Gateway controller from the chart in its source. The extproc sidecars it injects never
 * look up instance metadata, and get `aws` in their environment, where the AWS default credential
 * chain finds them (Bedrock PassthroughModels have no credential Secret). `extensionMessageMiB`:
 * the largest message its extension server takes from Envoy Gateway (4 MiB by default).
 */
export async function installAiGateway(images: DataPlaneImages, aws?: AwsCredentials, extensionMessageMiB?: number): Promise<void> {
  const [controllerRepo, controllerTag] = splitReference(images.aigwController);
  const [extprocRepo, extprocTag] = splitReference(images.extproc);
  const env = { AWS_EC2_METADATA_DISABLED: 'true', ...(aws ? { AWS_ACCESS_KEY_ID: aws.accessKeyId, AWS_SECRET_ACCESS_KEY: aws.secretAccessKey } : {}) };
  await helmOk(4, [
    'install', 'aieg', path.join(aiGatewaySource(), 'manifests', 'charts', 'ai-gateway-helm'), '-n', AIGW_NAMESPACE, '--create-namespace', '--skip-crds', '--wait', '--timeout', '4m',
    '--set', `controller.image.repository=${controllerRepo}`, '--set', `controller.image.tag=${controllerTag}`,
    '--set', `extProc.image.repository=${extprocRepo}`, '--set', `extProc.image.tag=${extprocTag}`,
    ...Object.entries(env).flatMap(([name, value], i) => ['--set', `extProc.extraEnvVars[${i}].name=${name}`, '--set-string', `extProc.extraEnvVars[${i}].value=${value}`]),
    // What docs/observability.md asks of installers: the client ID our API-key check forwards
    // becomes the `client_id` label of the extproc's token and latency metrics.
    '--set-string', `controller.metricsRequestHeaderAttributes=${USAGE_METRIC_HEADER_ATTRIBUTES}`,
    ...(extensionMessageMiB ? ['--set', `controller.maxRecvMsgSize=${extensionMessageMiB * 2 ** 20}`] : []),
  ]);
}

/**
 * The AI Gateway controller's `metricsRequestHeaderAttributes` (docs/observability.md): the chart's
 * default client-ID header → `client_id`. One pair serves both endpoints: the API-key check writes
 * the key's client ID into the header, the internal endpoint's JWT check the token's subject.
 */
export const USAGE_METRIC_HEADER_ATTRIBUTES = 'x-llm-client-id:client_id';

/** `host:port/repo:tag` → [`host:port/repo`, `tag`], as charts take images. */
function splitReference(ref: string): [string, string] {
  const i = ref.lastIndexOf(':');
  return [ref.slice(0, i), ref.slice(i + 1)];
}

/** One Gateway of the platform: HTTPS on 443 terminating with `tlsSecret`, routes from every namespace. */
export interface PlatformGateway {
  readonly name: string;
  readonly listener: string;
  readonly hostname: string;
}

/**
 * What Nebari provides before the chart: an EnvoyProxy (our Envoy image, one Envoy thread, a
 * ClusterIP Service: the run has no load balancer; spans to the trace collector when given, none
 * sampled unless a route says so), its GatewayClass, the endpoint certificate and the Gateways the chart
 * values name.
 */
export async function installPlatformGateways(gateways: PlatformGateway[], ca: KeyPair, envoyImage: string, traceCollector?: { address: string; port: number }): Promise<void> {
  const serving = issueServingCertificate({ ca, dnsNames: gateways.map((g) => g.hostname) });
  await applyAll([
    ...(traceCollector ? [{
      apiVersion: 'gateway.envoyproxy.io/v1alpha1', kind: 'Backend', metadata: { name: 'trace-collector', namespace: EG_NAMESPACE },
      spec: { endpoints: [{ ip: { address: traceCollector.address, port: traceCollector.port } }] },
    } as KubeObject] : []),
    {
      apiVersion: 'gateway.envoyproxy.io/v1alpha1', kind: 'EnvoyProxy', metadata: { name: 'proxy', namespace: EG_NAMESPACE },
      // A GatewayClass's EnvoyProxy replaces Envoy Gateway's default one, image included.
      spec: {
        concurrency: 1,
        provider: { type: 'Kubernetes', kubernetes: { envoyService: { type: 'ClusterIP' }, envoyDeployment: { container: { image: envoyImage } } } },
        ...(traceCollector ? {
          telemetry: {
            tracing: {
              samplingRate: 0,
              provider: { type: 'OpenTelemetry', backendRefs: [{ group: 'gateway.envoyproxy.io', kind: 'Backend', name: 'trace-collector' }] },
            },
          },
        } : {}),
      },
    } as KubeObject,
    {
      apiVersion: 'gateway.networking.k8s.io/v1', kind: 'GatewayClass', metadata: { name: 'eg' },
      spec: { controllerName: 'gateway.envoyproxy.io/gatewayclass-controller', parametersRef: { group: 'gateway.envoyproxy.io', kind: 'EnvoyProxy', name: 'proxy', namespace: EG_NAMESPACE } },
    } as KubeObject,
    { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'llm-tls', namespace: EG_NAMESPACE }, type: 'kubernetes.io/tls', stringData: { 'tls.crt': serving.certPem, 'tls.key': serving.keyPem } } as KubeObject,
    ...gateways.map((g) => ({
      apiVersion: 'gateway.networking.k8s.io/v1', kind: 'Gateway', metadata: { name: g.name, namespace: EG_NAMESPACE },
      spec: {
        gatewayClassName: 'eg',
        listeners: [{
          name: g.listener, protocol: 'HTTPS', port: 443, hostname: g.hostname,
          tls: { mode: 'Terminate', certificateRefs: [{ kind: 'Secret', name: 'llm-tls' }] },
          allowedRoutes: { namespaces: { from: 'All' } },
        }],
      },
    }) as KubeObject),
  ]);
}

/** The labels Envoy Gateway puts on a Gateway's proxy pods and Service. */
export function proxySelector(gateway: string): string {
  return `gateway.envoyproxy.io/owning-gateway-name=${gateway},gateway.envoyproxy.io/owning-gateway-namespace=${EG_NAMESPACE}`;
}

/** The ClusterIP of the Service Envoy Gateway made for a Gateway's proxies. */
export async function proxyAddress(gateway: string): Promise<string> {
  const list = await admin().list<KubeObject & { spec: { clusterIP?: string } }>('v1', 'Service', { namespace: EG_NAMESPACE, labelSelector: proxySelector(gateway) });
  const ip = list.items[0]?.spec.clusterIP;
  if (!ip) throw new Error(`no Envoy Service for Gateway ${gateway} in ${EG_NAMESPACE}`);
  return ip;
}

type ProxyPod = Awaited<ReturnType<typeof pods>>[number] & { spec: { initContainers?: { name: string }[] } };

/** Proxy pods of a Gateway; `withSidecar` tells whether the AI Gateway's webhook injected extproc. */
export async function proxyPods(gateway: string): Promise<{ name: string; ready: boolean; withSidecar: boolean }[]> {
  const list = (await pods(proxySelector(gateway), EG_NAMESPACE)) as ProxyPod[];
  return list.map((p) => ({
    name: p.metadata.name,
    ready: !!p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
    withSidecar: [...(p.spec.initContainers ?? []), ...p.spec.containers].some((c) => c.name.includes('extproc')),
  }));
}

/** One sample of the extproc's Prometheus exposition: its labels and value. */
export interface MetricSample {
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

type PodContainerPorts = { ports?: { name?: string; containerPort: number }[] };
type PodWithPorts = Awaited<ReturnType<typeof pods>>[number] & { spec: { containers: PodContainerPorts[]; initContainers?: PodContainerPorts[] } };

/**
 * The samples of `metric` on every running proxy pod of a Gateway, read from the extproc sidecar's
 * admin port (`aigw-admin`, /metrics) at the pod address, as a scrape would.
 */
export async function extprocSamples(gateway: string, metric: string): Promise<MetricSample[]> {
  const samples: MetricSample[] = [];
  for (const pod of (await pods(proxySelector(gateway), EG_NAMESPACE)) as PodWithPorts[]) {
    // The AI Gateway injects extproc as a native sidecar: an init container that keeps running.
    const containers = [...(pod.spec.initContainers ?? []), ...pod.spec.containers];
    const port = containers.flatMap((c) => c.ports ?? []).find((p) => p.name === 'aigw-admin')?.containerPort;
    if (!pod.status?.podIP || pod.status.phase !== 'Running' || !port) continue;
    const text = await (await fetch(`http://${pod.status.podIP}:${port}/metrics`)).text();
    for (const line of text.split('\n')) {
      const m = /^(\w+)\{(.*)\} (\S+)$/.exec(line);
      if (!m || m[1] !== metric) continue;
      const labels = Object.fromEntries([...m[2].matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((l) => [l[1], l[2]]));
      samples.push({ labels, value: Number(m[3]) });
    }
  }
  return samples;
}
