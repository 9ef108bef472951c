// The chart's values: one TypeBox source for values.schema.json, the commented values.yaml, the
// README values table, the TS type the constructs read, and the validation of custom-build configs.
// Every object is closed (`additionalProperties: false`) so a misspelt key fails at install time;
// the only open maps are Kubernetes pass-through fields (labels, resources, affinity, ...), whose
// value types are still checked.
import { plainCopy } from '../../constructs/render-context';
import { ALERT_RULES } from '../../constructs/alert-rules';
import { HOME } from '../version';
import { Static, TSchema, Type } from '@sinclair/typebox';
import { DEFAULT_DOWNLOADER_IMAGE, DEFAULT_EPP_IMAGE, DEFAULT_VLLM_IMAGE } from '../translate/providers/default-images';

const closed = <T extends Parameters<typeof Type.Object>[0]>(props: T, description: string) =>
  Type.Object(props, { additionalProperties: false, description });

const stringMap = (description: string) =>
  Type.Record(Type.String(), Type.String(), { default: {}, description });

/** Labels the chart sets itself; a user label with the same key would be a duplicate YAML key. */
export const RESERVED_LABELS = [
  'app.kubernetes.io/name',
  'app.kubernetes.io/instance',
  'app.kubernetes.io/component',
  'app.kubernetes.io/part-of',
  'app.kubernetes.io/version',
  'app.kubernetes.io/managed-by',
  'helm.sh/chart',
];

/** A Prometheus duration (`30s`, `5m`, `1h`). */
const duration = (def: string, description: string) => Type.String({ default: def, pattern: '^[0-9]+(ms|s|m|h|d)$', description });

const labelMap = (description: string) =>
  Type.Record(Type.String(), Type.String(), { default: {}, propertyNames: { not: { enum: RESERVED_LABELS } }, description: `${description} The chart's own app.kubernetes.io/* and helm.sh/chart labels cannot be overridden.` });

/** A Kubernetes object passed through verbatim (affinity, securityContext, peers...). */
const opaqueObject = (description: string, def: Record<string, unknown> = {}) =>
  Type.Object({}, { additionalProperties: true, default: def, description });

const dnsLabelOrEmpty = (description: string, def = '') =>
  Type.String({ default: def, maxLength: 52, pattern: '^([a-z0-9]([-a-z0-9]*[a-z0-9])?)?$', description });

const image = (repository: string, what: string) =>
  closed(
    {
      repository: Type.String({ default: repository, minLength: 1, description: `Image repository of ${what}.` }),
      tag: Type.String({ default: '', description: 'Image tag; empty means the chart appVersion. Ignored when digest is set.' }),
      digest: Type.String({
        default: '',
        pattern: '^(sha256:[a-f0-9]{64})?$',
        description: 'Image digest (`sha256:...`); when set the image is pulled by digest, which is immutable.',
      }),
      pullPolicy: Type.Union([Type.Literal('IfNotPresent'), Type.Literal('Always'), Type.Literal('Never')], {
        default: 'IfNotPresent',
        description: 'Image pull policy.',
      }),
    },
    `Container image of ${what}.`,
  );

/** A full image reference (`registry/repository:tag` or `@sha256:...`); empty means the built-in default. */
const imageOrEmpty = (description: string) => Type.String({ default: '', pattern: '^\\S*$', description });

/**
 * A DNS name as people write it: upper case and one trailing root dot are accepted and normalised
 * (lower-cased, the dot removed) where the value is used, as provider host names are.
 */
const HOST_NAME_OR_EMPTY = '^([A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?(\\.[A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?)*\\.?)?$';
const NORMALISED = 'Upper case and one trailing root dot are accepted: the name is lower-cased and the dot removed.';

const endpoint = (name: string, auth: string, section: string, gateway: string) =>
  closed(
    {
      hostname: Type.String({
        default: '',
        pattern: HOST_NAME_OR_EMPTY,
        description: `Host name clients call; empty means \`${name === 'external' ? 'llm' : 'llm-internal'}.<baseDomain>\`. ${NORMALISED}`,
      }),
      gatewayName: Type.String({ default: gateway, minLength: 1, description: `Gateway the model routes attach to. Keep the external and internal endpoints on different Gateways: on one Envoy listener, AI Gateway 1.1.0 runs each endpoint picker twice per request, and one certificate for both host names limits clients to HTTP/1.1 (docs/compatibility-gateway.md).` }),
      gatewayNamespace: Type.String({ default: 'envoy-gateway-system', minLength: 1, description: 'Namespace of that Gateway.' }),
      sectionName: Type.String({ default: section, description: 'Listener of the Gateway; empty attaches to every listener.' }),
    },
    `The ${name} endpoint (${auth}).`,
  );

export const ValuesSchema = closed(
  {
    nameOverride: dnsLabelOrEmpty('Replaces the chart name in object names.'),
    fullnameOverride: dnsLabelOrEmpty('Replaces the full name (release name, plus the chart name when they differ) in object names.'),
    commonLabels: labelMap('Labels added to every object the chart creates.'),
    namespace: closed(
      {
        create: Type.Boolean({
          default: false,
          description:
            'Create the release namespace as a chart object. Leave false and install with `helm install --create-namespace` (Helm 4 stores its release record in the namespace before creating chart objects, so a chart-made namespace fails a fresh install). No label is required: models are admitted in the release namespace only.',
        }),
        labels: labelMap('Extra labels for the created namespace.'),
      },
      'The release namespace.',
    ),
    watchNamespaces: Type.Array(
      Type.String({ minLength: 1, maxLength: 63, pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$', description: 'An existing namespace name.' }),
      {
        default: [],
        uniqueItems: true,
        description:
          'Namespaces besides the release namespace where AgentDeployments are admitted and reconciled. Each gets a Role and RoleBinding for the operator (workloads, the agent key Secret, Events); the namespaces must exist. Models always live in the release namespace. See docs/security.md.',
      },
    ),
    imagePullSecrets: Type.Array(
      closed({ name: Type.String({ minLength: 1, description: 'Name of a docker-registry Secret in the release namespace.' }) }, 'A pull secret reference.'),
      { default: [], description: 'Pull secrets for the operator pods.' },
    ),
    platform: closed(
      {
        baseDomain: Type.String({
          default: '',
          pattern: HOST_NAME_OR_EMPTY,
          description: `Base DNS domain of the platform (e.g. \`example.com\`); endpoint host names derive from it. Required for the operator to serve models. ${NORMALISED}`,
        }),
        external: endpoint('external', 'API keys', 'llm-https', 'nebari-gateway'),
        internal: endpoint('internal', 'OIDC JWT + groups', 'llm-internal-https', 'nebari-internal-gateway'),
        jwt: closed(
          {
            issuer: Type.String({ default: '', pattern: '^(https://\\S+)?$', description: 'OIDC issuer URL (https); required while any model enables its internal endpoint.' }),
            jwksUri: Type.String({ default: '', pattern: '^(https://\\S+)?$', description: 'Signing keys URL; empty means `<issuer>/protocol/openid-connect/certs` (Keycloak).' }),
            groupsClaim: Type.String({ default: 'groups', minLength: 1, description: 'Token claim holding the caller\'s groups (a string array).' }),
            audiences: Type.Array(Type.String({ minLength: 1 }), {
              default: [],
              description:
                'Accepted `aud` values: the client IDs whose tokens may call models on the internal endpoint. Required while `platform.jwt.issuer` is set (`helm install` fails naming it), unless `allowAnyAudience` is true: empty, a token the issuer minted for any other client (another application\'s ID or access token) would be accepted and could be replayed against the models (docs/security.md).',
            }),
            allowAnyAudience: Type.Boolean({
              default: false,
              description:
                'Accept tokens of any audience on the internal endpoint while `audiences` is empty. Only for an issuer whose every client may call the models: any token it minted for another application can then be replayed here (docs/security.md).',
            }),
          },
          'How the internal endpoint checks OIDC tokens.',
        ),
        passthroughRequestTimeout: Type.String({ default: '120s', pattern: '^([0-9]{1,5}(h|m|s|ms)){1,4}$', description: 'Request timeout of PassthroughModel routes.' }),
        llmModelRequestTimeout: Type.String({ default: '600s', pattern: '^([0-9]{1,5}(h|m|s|ms)){1,4}$', description: 'Request timeout of LLMModel routes whose spec sets none.' }),
        clientIDHeader: Type.String({ default: 'x-llm-client-id', pattern: '^[a-z0-9-]+$', description: 'Header that names the caller to authorization, quotas and usage metrics: the API-key client ID on the external endpoint, the token subject on the internal one.' }),
        modelsOwnedBy: Type.String({ default: 'nebari-llm-serving', minLength: 1, description: '`owned_by` of LLMModel entries in `/v1/models`.' }),
        tracing: closed(
          {
            enabled: Type.Boolean({
              default: false,
              description:
                "Give every model route a sampling share and span tags (model, kind, namespace, endpoint, and the key's client ID on the external endpoint). Spans go to the tracing provider of the Gateways' EnvoyProxy, which must have one (docs/observability.md).",
            }),
            samplingRatio: Type.Number({ default: 1, minimum: 0, maximum: 1, description: "Share of each model's requests traced when the caller sent no sampling decision, 0 to 1." }),
          },
          'Tracing of model requests at the gateway.',
        ),
        providerTLS: closed(
          {
            caConfigMap: Type.String({
              default: '',
              maxLength: 253,
              pattern: '^([a-z0-9]([-a-z0-9.]*[a-z0-9])?)?$',
              description:
                "ConfigMap in the release namespace whose `ca.crt` holds the CA certificates (PEM) that PassthroughModel providers' TLS certificates must chain to, instead of the proxies' system trust bundle. Empty: the system CAs. A bundle of the few roots your providers use costs Envoy about 0.15 MiB per PassthroughModel instead of 1.5 MiB, and no file watch per model (the system bundle costs one inotify instance per model: docs/compatibility-gateway.md). Models report `BackendConfigured=False` while the ConfigMap or its `ca.crt` is missing.",
            }),
          },
          "How the gateway verifies PassthroughModel providers' TLS certificates.",
        ),
        proxyStatus: Type.Boolean({
          default: true,
          description:
            "Report each model's `Programmed` condition: True once its routes are accepted by the Gateway and the Gateway's Envoy proxies have rolled out with the AI Gateway sidecar, so a request would reach it. Grants the operator read access to Deployments in each Gateway's namespace (`platform.external.gatewayNamespace`, `platform.internal.gatewayNamespace`), which must exist at install time. False: no such Role, and Programmed is Unknown.",
        }),
      },
      'Where models are served: the shared gateway endpoints the operator attaches model routes to (passed to the operator as NLS_GATEWAY_CONTEXT).',
    ),
    operator: closed(
      {
        image: image('nebari/nebari-llm-serving', 'the operator (with the webhook server inside)'),
        replicas: Type.Integer({
          default: 1,
          minimum: 1,
          maximum: 10,
          description: 'Operator replicas. With more than one, leader election is forced on and a PodDisruptionBudget is created.',
        }),
        leaderElection: Type.Boolean({ default: true, description: 'Use a Lease so only one replica reconciles (always on when replicas > 1).' }),
        logLevel: Type.Union([Type.Literal('debug'), Type.Literal('info'), Type.Literal('warn'), Type.Literal('error')], {
          default: 'info',
          description: 'Log level of the operator.',
        }),
        resources: closed(
          {
            requests: Type.Record(Type.String(), Type.Union([Type.String(), Type.Number()]), {
              default: { cpu: '100m', memory: '128Mi' },
              description: 'Resource requests.',
            }),
            limits: Type.Record(Type.String(), Type.Union([Type.String(), Type.Number()]), {
              default: { memory: '512Mi' },
              description:
                'Resource limits (no CPU limit by default, to avoid throttling the webhook). The operator sizes its heap to 75% of the memory ' +
                'limit; it measured about 80 MiB idle and about 35 MiB more per 1,000 models at peak (npm run bench -- operator, docs/performance.md).',
            }),
          },
          'Operator container resources.',
        ),
        podAnnotations: stringMap('Annotations for the operator pods.'),
        podLabels: labelMap('Extra labels for the operator pods.'),
        nodeSelector: stringMap('Node selector for the operator pods.'),
        tolerations: Type.Array(Type.Object({}, { additionalProperties: true }), { default: [], description: 'Tolerations for the operator pods.' }),
        affinity: opaqueObject('Affinity for the operator pods.'),
        priorityClassName: Type.String({ default: '', description: 'Priority class of the operator pods; empty means none.' }),
        podDisruptionBudget: closed(
          {
            minAvailable: Type.Integer({ default: 1, minimum: 0, description: 'Pods that must stay available during voluntary disruptions.' }),
          },
          'The PodDisruptionBudget created when replicas > 1.',
        ),
      },
      'The operator Deployment.',
    ),
    providers: closed(
      {
        vllm: closed(
          { image: imageOrEmpty(`vLLM server image for LLMModels that set no \`spec.serving.image\`; empty means \`${DEFAULT_VLLM_IMAGE}\`.`) },
          'The vLLM provider (NLS_VLLM_IMAGE).',
        ),
        modelDownloader: closed(
          { image: imageOrEmpty(`Image of the init container that downloads model files; empty means \`${DEFAULT_DOWNLOADER_IMAGE}\`.`) },
          'The model downloader (NLS_MODEL_DOWNLOADER_IMAGE).',
        ),
        endpointPicker: closed(
          { image: imageOrEmpty(`Gateway API Inference Extension endpoint picker image; empty means \`${DEFAULT_EPP_IMAGE}\`.`) },
          'The endpoint picker of vLLM models (NLS_EPP_IMAGE).',
        ),
        storageClassName: Type.String({
          default: '',
          description: 'StorageClass of model cache volumes whose LLMModel sets none; empty means the cluster default (NLS_STORAGE_CLASS_NAME).',
        }),
      },
      'Defaults of the in-cluster model providers (passed to the operator as environment variables).',
    ),
    rbac: closed(
      {
        userFacingRoles: Type.Boolean({
          default: true,
          description:
            'Create ClusterRoles that add read rights on LLMModels, PassthroughModels and AgentDeployments to the built-in `view` role, and write rights to `edit` and `admin` (aggregation labels), so namespace users need no extra binding.',
        }),
      },
      'Roles for the people using the kinds (the operator\'s own RBAC is always created).',
    ),
    serviceAccount: closed(
      {
        create: Type.Boolean({ default: true, description: 'Create the operator ServiceAccount.' }),
        name: Type.String({ default: '', description: 'ServiceAccount name; empty means the full name.' }),
        annotations: stringMap('Annotations for the ServiceAccount (e.g. cloud workload identity).'),
      },
      'The operator ServiceAccount.',
    ),
    webhook: closed(
      {
        timeoutSeconds: Type.Integer({ default: 10, minimum: 1, maximum: 30, description: 'Admission webhook timeout.' }),
        allowedImages: Type.Array(Type.String({ minLength: 1, pattern: '^[^\\s,]+$', description: 'An image prefix ending in `/`, `:` or `@`, or a whole image reference.' }), {
          default: [],
          uniqueItems: true,
          description:
            'Images model and agent authors may run: `spec.serving.image` of LLMModels (and container images in their provider overrides, KAITO adapter images) and `spec.container.image` of AgentDeployments. ' +
            'Each entry is a prefix ending in `/`, `:` or `@` (`registry.example.com/vllm/`, `vllm/vllm-openai:`) or a whole reference matched exactly; images are compared as written (no `docker.io/` is added). ' +
            'Empty allows every image. Checked by the webhook on create and on every spec change, and by `nls validate --allowed-images`. See docs/security.md.',
        }),
        clientCA: Type.String({
          default: '',
          description:
            "PEM CA bundle that signed the API server's client certificate for webhooks (its AdmissionConfiguration kubeconfig). When set, the webhook port answers only clients presenting a certificate it signed, so no pod can use the webhook to learn what a user may read. " +
            'Empty (the default) answers any client that reaches the port; restrict it then with networkPolicy.webhookFrom. See docs/security.md.',
        }),
        agentDeployment: closed(
          {
            enabled: Type.Boolean({
              default: true,
              description: 'Serve the AgentDeployment validating and mutating routes. Switched off during the guarded upgrade (`nls upgrade`).',
            }),
          },
          'AgentDeployment admission routes.',
        ),
        upgradeGuard: closed(
          {
            enabled: Type.Boolean({
              default: false,
              description: 'Install the fail-closed guard that denies AgentDeployment CREATE/UPDATE while the operator rolls out.',
            }),
          },
          'The AgentDeployment upgrade guard.',
        ),
        installCheck: closed(
          {
            enabled: Type.Boolean({
              default: true,
              description:
                'Run `nls wait-webhooks` as a Helm hook Job after install, upgrade and rollback, so Helm reports the release ready only once the API server reaches the webhooks through their Service (a Ready pod alone can precede that by seconds).',
            }),
            timeoutSeconds: Type.Integer({ default: 180, minimum: 10, maximum: 1800, description: 'How long the check waits; the hook Job fails after that, and so does the Helm command.' }),
            resources: closed(
              {
                requests: Type.Record(Type.String(), Type.Union([Type.String(), Type.Number()]), { default: { cpu: '10m', memory: '64Mi' }, description: 'Resource requests.' }),
                limits: Type.Record(Type.String(), Type.Union([Type.String(), Type.Number()]), { default: { memory: '192Mi' }, description: 'Resource limits.' }),
              },
              'Resources of the check container.',
            ),
          },
          'The post-install webhook check (a Helm hook; plain bundles leave it out).',
        ),
        certificates: closed(
          {
            mode: Type.Union([Type.Literal('self-managed'), Type.Literal('cert-manager')], {
              default: 'self-managed',
              description:
                '`self-managed`: the operator creates the CA and serving certificate and injects the CA. `cert-manager`: a Certificate is requested and cert-manager injects the CA.',
            }),
            certManager: closed(
              {
                issuerRef: closed(
                  {
                    name: Type.String({ default: '', description: 'Existing issuer to use; empty creates a self-signed Issuer for the webhook.' }),
                    kind: Type.Union([Type.Literal('Issuer'), Type.Literal('ClusterIssuer')], { default: 'Issuer', description: 'Kind of the existing issuer.' }),
                  },
                  'Issuer of the webhook certificate.',
                ),
                duration: Type.String({ default: '8760h', pattern: '^[0-9]+(h|m|s)$', description: 'Certificate lifetime.' }),
                renewBefore: Type.String({ default: '720h', pattern: '^[0-9]+(h|m|s)$', description: 'Renew this long before expiry.' }),
              },
              'Settings used when mode is cert-manager.',
            ),
          },
          'Webhook serving certificates.',
        ),
      },
      'Admission webhooks.',
    ),
    networkPolicy: closed(
      {
        enabled: Type.Boolean({ default: true, description: 'Restrict ingress to the operator pods to the webhook and metrics ports.' }),
        metricsFrom: Type.Array(Type.Object({}, { additionalProperties: true }), {
          default: [],
          description: 'NetworkPolicy peers allowed to scrape metrics; empty allows any source.',
        }),
        webhookFrom: Type.Array(Type.Object({}, { additionalProperties: true }), {
          default: [],
          description:
            "NetworkPolicy peers allowed to reach the webhook port (the API server's addresses, e.g. `ipBlock: {cidr: 10.0.0.0/24}`); empty allows any source, since the API server's address is cluster-specific. See docs/security.md.",
        }),
      },
      'NetworkPolicy for the operator pods.',
    ),
    serviceMonitor: closed(
      {
        enabled: Type.Boolean({ default: false, description: 'Create Prometheus Operator ServiceMonitors for the operator metrics and, with `portal.enabled`, the portal metrics.' }),
        interval: Type.String({ default: '30s', pattern: '^[0-9]+(ms|s|m|h)$', description: 'Scrape interval.' }),
        labels: labelMap('Extra labels on the ServiceMonitor (to match a Prometheus selector).'),
      },
      'Prometheus scraping.',
    ),
    prometheusRule: closed(
      {
        enabled: Type.Boolean({ default: false, description: 'Create a Prometheus Operator PrometheusRule with the alerts of docs/runbooks/ (operator, portal, gateway and provider health, quotas).' }),
        labels: labelMap('Extra labels on the PrometheusRule (to match a Prometheus `ruleSelector`).'),
        runbookBaseURL: Type.String({
          default: `${HOME}/blob/main/docs/runbooks`,
          minLength: 1,
          pattern: '^\\S+[^/]$',
          description: 'Where the runbooks are: each alert\'s `runbook_url` is `<this>/<alert>.md`. Point it at your own copy to add local steps.',
        }),
        rateWindow: duration('5m', 'Range of every `rate()` in the alerts: shorter reacts faster and is noisier; at least four scrape intervals.'),
        alerts: closed(
          Object.fromEntries(ALERT_RULES.map((a) => [a.key, closed(
            {
              for: duration(a.for, `How long the condition holds before ${a.alert} fires.`),
              ...(a.threshold ? { threshold: Type.Number({ default: a.threshold.default, minimum: 0, description: `${a.alert} fires above this: ${a.threshold.meaning}.` }) } : {}),
            },
            `${a.alert} (docs/runbooks/${a.alert}.md).`,
          )])),
          'Per alert: its `for` and threshold.',
        ),
      },
      'Alert rules for a Prometheus Operator Prometheus.',
    ),
    grafanaDashboards: closed(
      {
        enabled: Type.Boolean({
          default: false,
          description: 'Create one ConfigMap per Grafana dashboard (gateway overview, usage by key, serving engines, operator and webhooks, key portal) for the Grafana dashboard sidecar. See docs/observability.md.',
        }),
        labels: Type.Record(Type.String(), Type.String(), {
          default: { grafana_dashboard: '1' },
          propertyNames: { not: { enum: RESERVED_LABELS } },
          description: "Labels on the dashboard ConfigMaps: the label the sidecar selects (kube-prometheus-stack: `grafana_dashboard: \"1\"`, its `sidecar.dashboards.label`/`labelValue`) and any others. The chart's own app.kubernetes.io/* and helm.sh/chart labels cannot be overridden.",
        }),
        annotations: stringMap('Annotations on the dashboard ConfigMaps, e.g. the folder annotation the sidecar reads (`sidecar.dashboards.folderAnnotation`; `grafana_folder: LLM serving`).'),
      },
      'Grafana dashboards as ConfigMaps.',
    ),
    pricing: closed(
      {
        currency: Type.String({ default: 'USD', pattern: '^[A-Z]{3}$', description: 'Currency of every price in `models` (an ISO 4217 code such as USD or EUR); the spend series carry it as the `currency` label.' }),
        models: Type.Array(
          closed(
            {
              namespace: Type.Optional(Type.String({ maxLength: 63, pattern: '^([a-z0-9]([-a-z0-9]*[a-z0-9])?)?$', description: 'Namespace of the model object; empty or absent means the release namespace.' })),
              model: Type.String({ minLength: 1, maxLength: 253, pattern: '^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$', description: 'Name of the LLMModel or PassthroughModel object (not the model name clients send).' }),
              input: Type.Number({ minimum: 0, description: 'Price of one million input tokens.' }),
              output: Type.Number({ minimum: 0, description: 'Price of one million output tokens.' }),
              cachedInput: Type.Optional(Type.Number({ minimum: 0, description: 'Price of one million cached input tokens (prompt cache reads); absent: charged as input.' })),
            },
            'Prices of one model object, per million tokens.',
          ),
          {
            default: [],
            description:
              'Prices per model object. Not empty: the chart renders the PrometheusRule `<fullname>-spend` (with `prometheusRule.labels`, whether or not `prometheusRule.enabled`) recording the prices and the spend per key, owner, group and model from the gateway\'s token counts (docs/observability.md). Each namespace and model at most once.',
          },
        ),
      },
      'The price table: what a million tokens of each model cost, turned into spend recording rules for a Prometheus Operator Prometheus.',
    ),
    gateway: closed(
      {
        gatewayClass: closed(
          {
            create: Type.Boolean({ default: false, description: 'Create a GatewayClass for Envoy Gateway.' }),
            name: Type.String({ default: '', description: 'GatewayClass name; empty means the full name.' }),
            controllerName: Type.String({ default: 'gateway.envoyproxy.io/gatewayclass-controller', minLength: 1, description: 'Controller that implements the class.' }),
          },
          'The GatewayClass (cluster-scoped, named after the release).',
        ),
        gateway: closed(
          {
            create: Type.Boolean({ default: false, description: 'Create a Gateway in the release namespace with the listeners below. Models attach to it only where `platform.external.gatewayName` or `platform.internal.gatewayName` names it; point at most one endpoint at it (see platform.external.gatewayName).' }),
            name: Type.String({ default: '', description: 'Gateway name; empty means the full name.' }),
            className: Type.String({ default: '', description: 'GatewayClass of the Gateway; empty means the class above.' }),
            listeners: Type.Array(Type.Object({}, { additionalProperties: true }), {
              minItems: 1,
              default: [{ name: 'http', protocol: 'HTTP', port: 80, allowedRoutes: { namespaces: { from: 'Same' } } }],
              description: 'Gateway listeners (Gateway API `spec.listeners`).',
            }),
          },
          'The Gateway.',
        ),
        gatewayConfig: closed(
          {
            create: Type.Boolean({ default: false, description: 'Create an AI Gateway GatewayConfig and attach it to the Gateway above.' }),
            extProcResources: Type.Object(
              {
                requests: Type.Optional(Type.Record(Type.String(), Type.Union([Type.String(), Type.Number()]), { description: 'Resource requests.' })),
                limits: Type.Optional(Type.Record(Type.String(), Type.Union([Type.String(), Type.Number()]), { description: 'Resource limits.' })),
              },
              { additionalProperties: false, minProperties: 1, default: { requests: { cpu: '100m', memory: '128Mi' } }, description: 'Resources of the AI Gateway external processor container.' },
            ),
          },
          'The AI Gateway GatewayConfig.',
        ),
        clientTrafficPolicy: closed(
          {
            create: Type.Boolean({ default: false, description: 'Create a ClientTrafficPolicy raising the request buffer for LLM bodies on the Gateway above.' }),
            bufferLimit: Type.String({ default: '50Mi', pattern: '^[1-9][0-9]*(Ki|Mi|Gi)?$', description: 'Connection buffer limit.' }),
          },
          'Envoy Gateway ClientTrafficPolicy.',
        ),
      },
      'Gateway-level objects, created once per release (never per model).',
    ),
    portal: closed(
      {
        enabled: Type.Boolean({
          default: false,
          description:
            'Run the self-service key portal: users log in with OIDC (the issuer and groups claim of `platform.jwt`) and mint, list and revoke API keys for the models their groups may use. Needs `platform.jwt.issuer`, `portal.oidc.clientId` and a host name (`portal.hostname` or `platform.baseDomain`); `helm install` fails naming the missing one. See docs/key-portal-install.md.',
        }),
        hostname: Type.String({
          default: '',
          pattern: HOST_NAME_OR_EMPTY,
          description: `Host name of the portal, routed on the internal endpoint's Gateway (\`platform.internal\`); empty means \`llm-keys.<baseDomain>\`. The portal's URL is \`https://<hostname>\` and its OIDC redirect URI \`https://<hostname>/auth/callback\`. ${NORMALISED}`,
        }),
        replicas: Type.Integer({ default: 1, minimum: 1, maximum: 10, description: 'Portal replicas (a Lease picks the one that refreshes groups). With more than one, a PodDisruptionBudget is created.' }),
        oidc: closed(
          {
            clientId: Type.String({ default: '', description: 'OIDC client ID registered for the portal (authorization code flow with PKCE). Required when the portal is enabled.' }),
            clientSecret: closed(
              {
                name: Type.String({ default: '', description: 'Existing Secret in the release namespace holding the client secret; empty means a public client.' }),
                key: Type.String({ default: 'client-secret', minLength: 1, description: 'Key of the client secret in that Secret.' }),
              },
              'The client secret of a confidential client (never put the secret itself in values).',
            ),
            scopes: Type.String({ default: 'openid profile email offline_access', minLength: 1, description: 'Space-separated scopes requested at login; `offline_access` gives the refresh token the group refresh needs.' }),
            caConfigMap: closed(
              {
                name: Type.String({ default: '', description: 'Existing ConfigMap with a PEM bundle trusted for the issuer (a private CA); empty trusts the system CAs.' }),
                key: Type.String({ default: 'ca.crt', minLength: 1, description: 'Key of the PEM bundle in that ConfigMap.' }),
              },
              'Extra CA for the OIDC issuer.',
            ),
          },
          'How the portal logs users in (issuer and groups claim come from `platform.jwt`).',
        ),
        adminGroups: Type.Array(Type.String({ minLength: 1 }), { default: [], description: 'Groups whose members see and revoke every key and read the audit log in the portal.' }),
        prometheusURL: Type.String({
          default: '',
          pattern: '^(https?://\\S+)?$',
          description:
            "The Prometheus that scrapes the gateway proxies' extproc and the operator (e.g. `http://prometheus-operated.monitoring:9090`): the portal's usage page and `/api/usage` read tokens and, with `pricing.models`, cost from it. Empty: they say usage is not available. The portal needs network access to it (no credentials are sent).",
        }),
        keyExpiry: closed(
          {
            defaultDays: Type.Integer({ default: 30, minimum: 1, maximum: 3650, description: 'Expiry offered by default when minting a key, in days.' }),
            maxDays: Type.Integer({ default: 90, minimum: 1, maximum: 3650, description: 'Longest expiry a user may choose, in days.' }),
          },
          'Key expiry set in the portal (keys minted with `nls keys mint` have none unless given).',
        ),
        keyLimits: closed(
          {
            keysPerUserPerModel: Type.Integer({
              default: 10,
              minimum: 1,
              maximum: 2000,
              description:
                'Live (not revoked, not expired) keys one user may hold on one model. 10 covers a laptop, CI and a few services with room to rotate, and 25 users at the limit still fit the 256 keys a model may have while quotas are on.',
            }),
            mintsPerUserPerHour: Type.Integer({
              default: 20,
              minimum: 1,
              maximum: 10000,
              description: 'Keys one user may mint per hour over all models, counted from the audit log (revoking does not give mints back): two full rotations of 10 keys, and at most 480 mint entries a day per user in the audit log.',
            }),
          },
          'Per-user limits on minting, so one user cannot take a model\'s whole key budget, multiply their quota with many keys or flood the audit log. The portal refuses a mint over a limit, naming it; `nls keys mint` applies the same limits (read from the portal Deployment) unless given `--over-limit`. See docs/api-keys.md.',
        ),
        groupRefreshSeconds: Type.Integer({
          default: 300,
          minimum: 30,
          maximum: 86400,
          description: "How often the portal refreshes each user's stored refresh token to learn their groups; keys whose granting groups are gone (or whose refresh is refused) are revoked.",
        }),
        groupRefreshFailClosedSeconds: Type.Integer({
          default: 86400,
          minimum: 60,
          maximum: 2592000,
          description:
            "How long a user's group refresh may keep failing for a reason other than a refusal (the issuer unreachable or erring, no readable refresh token) before the portal fails closed: the user is marked refused and all their portal keys are revoked (reason `user-refresh-failing`). At least two `groupRefreshSeconds`. See docs/key-portal.md.",
        }),
        metricsPort: Type.Integer({
          default: 9090,
          minimum: 1024,
          maximum: 65535,
          description: 'Port of the portal\'s Prometheus `/metrics` (users failing refresh, without or with unreadable refresh tokens, keys revoked); on the portal Service as port `metrics`, never routed by its HTTPRoute. Scraping it through a NetworkPolicy needs `networkPolicy.metricsFrom`.',
        }),
        sessionSecretName: dnsLabelOrEmpty('Secret holding the session keys (entries `key` and `key-<UTC timestamp>`; the newest seals, all open; the portal creates it with one random key if missing); empty means `<fullname>-portal-session`. Rotate by adding a key, never by deleting the Secret: see docs/key-portal.md.'),
        resources: closed(
          {
            requests: Type.Record(Type.String(), Type.Union([Type.String(), Type.Number()]), { default: { cpu: '20m', memory: '96Mi' }, description: 'Resource requests.' }),
            limits: Type.Record(Type.String(), Type.Union([Type.String(), Type.Number()]), { default: { memory: '256Mi' }, description: 'Resource limits.' }),
          },
          'Portal container resources.',
        ),
        podAnnotations: stringMap('Annotations for the portal pods.'),
        podLabels: labelMap('Extra labels for the portal pods.'),
        nodeSelector: stringMap('Node selector for the portal pods.'),
        tolerations: Type.Array(Type.Object({}, { additionalProperties: true }), { default: [], description: 'Tolerations for the portal pods.' }),
        networkPolicy: closed(
          {
            from: Type.Array(Type.Object({}, { additionalProperties: true }), {
              default: [],
              description: "NetworkPolicy peers allowed to reach the portal (with `networkPolicy.enabled`); empty allows the namespace of the internal endpoint's Gateway (`platform.internal.gatewayNamespace`), where Envoy Gateway runs the proxies by default.",
            }),
          },
          'Ingress to the portal pods.',
        ),
      },
      'The self-service API-key portal (its own Deployment, ServiceAccount, Role, Service and HTTPRoute on the internal endpoint).',
    ),
    quotas: closed(
      {
        rateLimitBackend: Type.String({
          default: '',
          description:
            "The rate-limit backend your Envoy Gateway installation is configured with (its EnvoyGateway `rateLimit.backend`, e.g. `redis://redis.envoy-gateway-system:6379`); only a label, the chart cannot see that configuration. Empty turns per-key token quotas off. Set it only when the backend exists: a Global BackendTrafficPolicy without one is Invalid and is reported to break every route of the Gateway. See docs/key-quotas.md.",
        }),
        costType: Type.Union(
          ['TotalToken', 'OutputToken', 'InputToken', 'CachedInputToken', 'CacheCreationInputToken', 'ReasoningToken'].map((t) => Type.Literal(t)),
          { default: 'TotalToken', description: 'Which token count a response is charged (AIGatewayRoute `llmRequestCosts[].type`).' },
        ),
        defaultTier: Type.String({ default: 'standard', minLength: 1, description: 'Tier of keys that name none (keys minted before quotas, or by `nls keys mint` without a tier); must be one of `tiers`.' }),
        tiers: Type.Array(
          closed(
            {
              name: Type.String({ minLength: 1, maxLength: 63, pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$', description: 'Tier name, recorded on each key.' }),
              description: Type.Optional(Type.String({ description: 'Shown in the portal; empty means "<tokens> tokens per <unit>".' })),
              tokens: Type.Integer({ minimum: 1, description: 'Tokens one key may use per unit.' }),
              unit: Type.Union(['Second', 'Minute', 'Hour', 'Day', 'Month'].map((u) => Type.Literal(u)), { description: 'The window of the token limit.' }),
              requestsPerMinute: Type.Optional(Type.Integer({ minimum: 1, description: 'Also limit requests per minute per key (one more rate-limit rule per key).' })),
              groups: Type.Optional(
                Type.Array(Type.String({ minLength: 1 }), {
                  description: 'Only members of one of these groups may mint keys in this tier in the portal (others are refused, naming the tier and its groups, and are not offered it); absent or empty: everyone.',
                }),
              ),
            },
            'A quota tier.',
          ),
          {
            minItems: 1,
            default: [{ name: 'standard', tokens: 1000000, unit: 'Day' }],
            description: 'Token budgets a key can be given at mint time. Every key gets its own counter (one rule per key, at most 256 rules per model; see docs/key-quotas.md).',
          },
        ),
      },
      'Per-key token quotas on the external endpoint (AIGatewayRoute `llmRequestCosts` plus a Global BackendTrafficPolicy per model), opt-in. Limits are approximate: a response is charged after it completes, so concurrent requests can overshoot.',
    ),
  },
  'Values of the nebari-llm-serving chart.',
);

export type ChartValues = Static<typeof ValuesSchema>;

/** The defaults written into values.yaml, collected from the schema. */
export function defaultValuesOf(schema: TSchema = ValuesSchema): unknown {
  if (schema.type === 'object' && schema.properties && !('default' in schema)) {
    const out: Record<string, unknown> = {};
    for (const [k, s] of Object.entries(schema.properties as Record<string, TSchema>)) out[k] = defaultValuesOf(s);
    return out;
  }
  return plainCopy(schema.default);
}

export function defaultValues(): ChartValues {
  return defaultValuesOf(ValuesSchema) as ChartValues;
}

/** A union of string literals as `enum`, so helm's message lists the allowed values. */
function literalUnionsAsEnums(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(literalUnionsAsEnums);
  if (!node || typeof node !== 'object') return node;
  const n = node as Record<string, unknown>;
  const anyOf = n.anyOf as Array<Record<string, unknown>> | undefined;
  if (anyOf && anyOf.every((x) => typeof x.const === 'string')) {
    const { anyOf: _drop, ...rest } = n;
    return { ...rest, type: 'string', enum: anyOf.map((x) => x.const) };
  }
  return Object.fromEntries(Object.entries(n).map(([k, v]) => [k, literalUnionsAsEnums(v)]));
}

/** values.schema.json: the TypeBox schema as plain JSON Schema (draft-07, which helm v3 and v4 read). */
export function valuesJsonSchema(): Record<string, unknown> {
  return { $schema: 'http://json-schema.org/draft-07/schema#', ...(literalUnionsAsEnums(JSON.parse(JSON.stringify(ValuesSchema))) as object) };
}
