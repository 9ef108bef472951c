// Fixtures of the lifecycle CLI test: charts built from the committed one, the in-process
// webhook servers that stand in for the old and the new operator, and the observer that writes
// AgentDeployments during an upgrade and records who admitted each write.
//
// Why charts are "wired": kwok runs no containers, so the chart's webhook Service has no server
// behind it, and inside the loopback-only network namespace a Service call fails at once. The
// test copies the committed chart and changes exactly one thing in its two webhook
// configuration templates: `clientConfig.service` becomes `clientConfig.url` on 127.0.0.1, at the
// port of the webhook server that plays that chart version's operator. Everything else — the
// guard (still Service-based, so it fails closed as designed), the Deployment, the Service whose
// EndpointSlices the CLI inspects, the values — is the committed chart.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { parseDocument } from 'yaml';
import { type WebhookServer, startWebhookServer } from '../../src/webhook';
import { type ClusterLookups, kubernetesLookups } from '../../src/webhook/lookups';
import { recordingLogger } from '../support/webhook/webhook-env';
import { waitFor } from '../support/processes';
import { KubeRest } from '../../src/kube/rest';
import { chartDir } from './chart-support';

export const CHART = 'nebari-llm-serving';
export const GUARD_WEBHOOK = 'agentdeployment-upgrade-guard.llm.nebari.dev';
export const NEW_FIELD = 'testOnlyNote';

const serviceClientConfig =
  /service:\n(\s+)name: \{\{ include "nebari-llm-serving\.fullname" \. \}\}-webhook\n\s+namespace: \{\{ \.Release\.Namespace \}\}\n\s+path: (\S+)\n\s+port: 443/g;

/** A copy of the committed chart at `version`, its webhooks called by URL on `port`, optionally with a new LLMModel field. */
export function wiredChart(root: string, version: string, port: number, addField: boolean): string {
  const dir = path.join(root, version, CHART);
  fs.cpSync(chartDir, dir, { recursive: true });
  const chartYaml = path.join(dir, 'Chart.yaml');
  const chart = parseDocument(fs.readFileSync(chartYaml, 'utf8'));
  chart.set('version', version);
  chart.set('appVersion', version);
  fs.writeFileSync(chartYaml, chart.toString());
  let rewritten = 0;
  for (const file of ['validating-webhook-configuration.yaml', 'mutating-webhook-configuration.yaml']) {
    const p = path.join(dir, 'templates', file);
    const text = fs.readFileSync(p, 'utf8').replace(serviceClientConfig, (_m, _indent: string, urlPath: string) => {
      rewritten++;
      return `url: https://127.0.0.1:${port}${urlPath}`;
    });
    fs.writeFileSync(p, text);
  }
  if (rewritten !== 6) throw new Error(`expected 6 service clientConfigs in the committed webhook templates, rewrote ${rewritten}; the chart changed, update this fixture`);
  if (addField) {
    const crdFile = path.join(dir, 'crds', 'llm.nebari.dev_llmmodels.yaml');
    const crd = parseDocument(fs.readFileSync(crdFile, 'utf8'));
    // In every served version, so clients of either can write it.
    const versions = (crd.getIn(['spec', 'versions']) as { items: unknown[] }).items.length;
    for (let i = 0; i < versions; i++) {
      crd.setIn(['spec', 'versions', i, 'schema', 'openAPIV3Schema', 'properties', 'spec', 'properties', NEW_FIELD], { type: 'string', description: 'A field only the test release has.' });
    }
    fs.writeFileSync(crdFile, crd.toString());
  }
  return dir;
}

/** Who called a lookup: `LLMModel/<ns>/<name>` -> servers in call order. */
export type LookupLog = Map<string, string[]>;

function recordingLookups(base: ClusterLookups, who: string, log: LookupLog): ClusterLookups {
  return {
    getModel: async (kind, namespace, name) => {
      const key = `${kind}/${namespace}/${name}`;
      log.set(key, [...(log.get(key) ?? []), who]);
      return base.getModel(kind, namespace, name);
    },
    listModels: (kind, namespace) => base.listModels(kind, namespace),
    userMayGet: (user, namespace, resource, name) => base.userMayGet(user, namespace, resource, name),
    userMayBindModel: (user, namespace, kind, name) => base.userMayBindModel(user, namespace, kind, name),
  };
}

export interface OperatorStandIn {
  readonly who: string;
  readonly server: WebhookServer;
  readonly calls: string[];
  close(): Promise<void>;
}

/** The real webhook server of src/webhook, as the operator of one chart version runs it (self-managed certificates). */
export async function startOperatorStandIn(kc: k8s.KubeConfig, who: string, port: number, namespace: string, release: string, log: LookupLog): Promise<OperatorStandIn> {
  const calls: string[] = [];
  const rest = new KubeRest(kc);
  const server = await startWebhookServer({
    kubeConfig: kc,
    env: {
      POD_NAMESPACE: namespace,
      NLS_RELEASE_NAME: release,
      NLS_WEBHOOK_SERVICE: `${release}-webhook`,
      NLS_VALIDATING_WEBHOOK_CONFIGURATIONS: `${release}-validating`,
      NLS_MUTATING_WEBHOOK_CONFIGURATIONS: `${release}-mutating`,
    },
    host: '127.0.0.1',
    extraIpAddresses: ['127.0.0.1'],
    checkIntervalMs: 300,
    log: recordingLogger(calls),
    lookups: recordingLookups(kubernetesLookups(rest), who, log),
    settings: { port },
  });
  return {
    who,
    server,
    calls,
    close: async () => {
      await server.close();
      rest.close();
    },
  };
}

export type Outcome = 'old' | 'new' | 'guard' | 'unvalidated' | 'mixed' | 'other';

export interface ObservedWrite {
  readonly name: string;
  readonly outcome: Outcome;
  readonly detail: string;
}

const llmModel = (name: string, namespace: string, labels: Record<string, string> = {}) => ({
  apiVersion: 'llm.nebari.dev/v1alpha1',
  kind: 'LLMModel',
  metadata: { name, namespace, labels },
  // One model id per model: the webhook refuses a second model serving an id (issue 29, Low).
  spec: { model: { name: `nls-test/${name}`, source: 'huggingface' }, resources: { gpu: { count: 1 } }, access: { public: true } },
});

export const fixtures = {
  llmModel,
  passthroughModel: (name: string, namespace: string, labels: Record<string, string> = {}) => ({
    apiVersion: 'llm.nebari.dev/v1alpha1',
    kind: 'PassthroughModel',
    metadata: { name, namespace, labels },
    spec: { provider: { hostname: 'api.openai.com', credentialSecretName: 'openai-key' }, models: { declared: [`gpt-4o-${name}`] }, access: { public: true } },
  }),
  agent: (name: string, namespace: string, labels: Record<string, string> = {}) => ({
    apiVersion: 'llm.nebari.dev/v1alpha1',
    kind: 'AgentDeployment',
    metadata: { name, namespace, labels },
    spec: { image: 'registry.example.com/agent:1.0', model: { externalAPI: { type: 'custom', baseURL: 'https://llm.example.com/v1', modelName: 'gpt-4o' } } },
  }),
};

/**
 * Writes in a loop: an LLMModel `obs-<tag>-<n>` (must always succeed), then an AgentDeployment of
 * the same name referencing it. Both AgentDeployment webhooks look that model up, so the lookup
 * log says which server mutated and which validated each write: `old`/`new` when one server did
 * both, `guard` when the guard denied it before any webhook ran, anything else is a failure.
 */
export class AgentWriter {
  readonly writes: ObservedWrite[] = [];
  readonly modelFailures: string[] = [];
  private running = false;
  private loop: Promise<void> | undefined;
  private n = 0;

  constructor(
    private readonly rest: KubeRest,
    private readonly namespace: string,
    private readonly tag: string,
    private readonly servers: { old: string; new: string },
    private readonly log: LookupLog,
  ) {}

  start(): void {
    this.running = true;
    this.loop = (async () => {
      while (this.running) {
        await this.once();
        // Pacing, not a wait for a state: a write every ~50 ms sees every phase of a command.
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();
  }

  /** Waits until a write begun after this call has finished, so the writes show the state reached by now. */
  async settle(): Promise<void> {
    const finished = () => this.writes.length + this.modelFailures.length;
    // The write in flight now may have begun earlier; the one after it has not.
    const target = finished() + 2;
    await waitFor('a write begun after the command finished', async () => finished() >= target, { timeoutMs: 30_000, intervalMs: 20 });
  }

  async stop(): Promise<ObservedWrite[]> {
    this.running = false;
    await this.loop;
    return this.writes;
  }

  private async once(): Promise<void> {
    const name = `obs-${this.tag}-${++this.n}`;
    try {
      await this.rest.create(llmModel(name, this.namespace, { 'nls-test/set': 'observer' }));
    } catch (error) {
      this.modelFailures.push(`${name}: ${(error as Error).message}`);
      return;
    }
    const key = `LLMModel/${this.namespace}/${name}`;
    let status = 201;
    let message = '';
    try {
      const agent = {
        apiVersion: 'llm.nebari.dev/v1alpha1',
        kind: 'AgentDeployment',
        metadata: { name, namespace: this.namespace, labels: { 'nls-test/set': 'observer' } },
        spec: { image: 'registry.example.com/agent:1.0', model: { modelRef: { kind: 'LLMModel', name } } },
      };
      await this.rest.create(agent);
    } catch (error) {
      status = (error as { code?: number }).code ?? 0;
      message = (error as Error).message;
    }
    const by = this.log.get(key) ?? [];
    const olds = by.filter((w) => w === this.servers.old).length;
    const news = by.filter((w) => w === this.servers.new).length;
    let outcome: Outcome;
    if (status < 300) outcome = olds === 2 && news === 0 ? 'old' : news === 2 && olds === 0 ? 'new' : by.length === 0 ? 'unvalidated' : 'mixed';
    else outcome = message.includes(GUARD_WEBHOOK) && by.length === 0 ? 'guard' : 'other';
    this.writes.push({ name, outcome, detail: `${status} by [${by.join(',')}] ${message.slice(0, 200)}` });
  }
}

/** The outcomes in order, consecutive repeats folded: e.g. `old guard new`. */
export function outcomeSequence(writes: readonly ObservedWrite[]): string {
  const folded: string[] = [];
  for (const w of writes) if (folded[folded.length - 1] !== w.outcome) folded.push(w.outcome);
  return folded.join(' ');
}
