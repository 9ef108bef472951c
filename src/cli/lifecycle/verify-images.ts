// `nls verify --images`: seed 001's last upgrade step, "only finish the upgrade when the desired
// GitOps revisions and actual pod images agree", as checks. Desired: the chart version and
// appVersion the operator Deployment was rendered from (its helm.sh/chart and
// app.kubernetes.io/version labels: the same for Helm, Argo CD and plain manifests) and the image
// the chart values name (the Deployment's operator container). Actual: the image digest each
// running operator pod reports (status.containerStatuses[].imageID). With an Argo CD Application,
// also its target revision for this chart.
import type { KubeObject, KubeRest } from '../../kube/rest';
import { RELEASED_IMAGE_ANNOTATION } from '../../release-pin';
import { CHART_NAME } from './guarded-phases';
import type { Installation } from './installation';
import type { Check } from './check';

export interface PodImage {
  readonly name: string;
  /** The operator container's spec image. */
  readonly image: string;
  /** status.containerStatuses[].imageID; empty before the container started. */
  readonly imageID: string;
}

export interface ApplicationSource {
  readonly chart?: string;
  readonly repoURL?: string;
  readonly targetRevision?: string;
}

export interface ApplicationFacts {
  readonly name: string;
  readonly sources: readonly ApplicationSource[];
  /** status.sync.revision / revisions[]: what Argo CD last synced. */
  readonly syncedRevisions: readonly string[];
}

export interface ImageFacts {
  readonly deployment: string;
  readonly labels: Readonly<Record<string, string>>;
  /** The Deployment's RELEASED_IMAGE_ANNOTATION: the image its chart was released with; empty for a build from a checkout. */
  readonly releasedImage?: string;
  readonly image: string;
  readonly pods: readonly PodImage[];
  /** Absent without --argocd-application; null when the named Application does not exist. */
  readonly application?: ApplicationFacts | null;
  readonly applicationRef?: string;
}

/** `sha256:…` of a reference or imageID (`repo@sha256:…`, `docker-pullable://repo@sha256:…`); undefined without one. */
export function imageDigest(reference: string): string | undefined {
  const at = reference.lastIndexOf('@');
  if (at < 0) return undefined;
  const digest = reference.slice(at + 1);
  return /^sha256:[a-f0-9]{64}$/.test(digest) ? digest : undefined;
}

/** The tag of an image reference (`repo:tag`, `repo:tag@sha256:…`); undefined without one. */
export function imageTag(reference: string): string | undefined {
  const name = reference.split('@')[0];
  const colon = name.lastIndexOf(':');
  return colon > name.lastIndexOf('/') ? name.slice(colon + 1) : undefined;
}

/** The chart version of a `helm.sh/chart` label (`nebari-llm-serving-0.2.0`; Helm writes `+` as `_`). */
export function chartVersionOfLabel(label: string | undefined): string | undefined {
  if (!label?.startsWith(`${CHART_NAME}-`)) return undefined;
  return label.slice(CHART_NAME.length + 1).replace(/_/g, '+');
}

/** The image checks, from facts already read. */
export function imageChecks(facts: ImageFacts): Check[] {
  const checks: Check[] = [];
  const chartVersion = chartVersionOfLabel(facts.labels['helm.sh/chart']);
  const appVersion = facts.labels['app.kubernetes.io/version'];
  checks.push({
    check: 'release version',
    result: chartVersion && appVersion ? 'pass' : 'fail',
    detail: chartVersion && appVersion
      ? `Deployment ${facts.deployment} is chart ${CHART_NAME} ${chartVersion}, appVersion ${appVersion}`
      : `Deployment ${facts.deployment} has no helm.sh/chart or app.kubernetes.io/version label of ${CHART_NAME}; install it from this chart (helm, Argo CD or deploy/)`,
  });

  const tag = imageTag(facts.image);
  const wantedDigest = imageDigest(facts.image);
  const tagDisagrees = tag !== undefined && appVersion !== undefined && tag !== appVersion && !wantedDigest;
  checks.push({
    check: 'operator image',
    result: tagDisagrees ? 'fail' : 'pass',
    detail: tagDisagrees
      ? `the chart values name ${facts.image}, but the chart's appVersion is ${appVersion}: operator.image.tag pins another version; remove the override or set it to ${appVersion} (or pin operator.image.digest)`
      : wantedDigest
        ? `the chart values name ${facts.image} (pinned by digest)`
        : `the chart values name ${facts.image}`,
  });

  checks.push(podImageCheck(facts, wantedDigest));
  checks.push(releasedImageCheck(facts));
  if (facts.application !== undefined) checks.push(applicationCheck(facts, chartVersion));
  return checks;
}

function podImageCheck(facts: ImageFacts, wantedDigest: string | undefined): Check {
  const check = 'operator pod images';
  const fail = (detail: string): Check => ({ check, result: 'fail', detail });
  if (facts.pods.length === 0) return fail(`no running pods of Deployment ${facts.deployment}; check kubectl get pods and the Deployment's events`);
  const stale = facts.pods.filter((p) => p.image !== facts.image);
  if (stale.length > 0) {
    return fail(`${stale.map((p) => `${p.name} runs ${p.image}`).join(', ')}, but the Deployment names ${facts.image}: the rollout has not finished; wait (kubectl rollout status deployment/${facts.deployment.split('/')[1]}) and verify again`);
  }
  const unreported = facts.pods.filter((p) => !imageDigest(p.imageID));
  if (unreported.length > 0) return fail(`${unreported.map((p) => p.name).join(', ')} report no image digest yet (container not started); wait and verify again`);
  const digests = new Map<string, string[]>();
  for (const p of facts.pods) {
    const d = imageDigest(p.imageID)!;
    digests.set(d, [...(digests.get(d) ?? []), p.name]);
  }
  if (digests.size > 1) {
    const list = [...digests].map(([d, pods]) => `${d} (${pods.join(', ')})`).join('; ');
    return fail(`the pods run different images for ${facts.image}: ${list}; the tag moved between pulls: pin operator.image.digest and roll the Deployment`);
  }
  const [running] = [...digests.keys()];
  if (wantedDigest && running !== wantedDigest) {
    return fail(`the pods run ${running}, but the chart values name ${wantedDigest}: the image was replaced under the digest's name or the pods are not of this Deployment; restart the Deployment and verify again`);
  }
  return { check, result: 'pass', detail: `${facts.pods.length} pod(s) run ${running}${wantedDigest ? ', the digest the chart values name' : ''}` };
}

/**
 * The running image is the one the chart was released with (by digest; the repository may be a
 * mirror). Values can move operator.image, but not the chart's record of its release.
 */
function releasedImageCheck(facts: ImageFacts): Check {
  const check = 'released image';
  const released = facts.releasedImage ?? '';
  const releasedDigest = imageDigest(released);
  if (!releasedDigest) {
    return { check, result: 'pass', detail: `the chart records no released image (${RELEASED_IMAGE_ANNOTATION}): a chart built from a checkout, not a release; nothing to compare` };
  }
  const named = imageDigest(facts.image);
  if (named !== releasedDigest) {
    return {
      check,
      result: 'fail',
      detail:
        `the chart was released with ${released}, but the Deployment names ${facts.image}: your values override operator.image ` +
        `(a custom build's values.yaml from before 0.2.0 wrote the checkout's operator.image with an empty digest); remove operator.image from the values, ` +
        `or set operator.image.digest to ${releasedDigest}, then upgrade and verify again`,
    };
  }
  const other = facts.pods.filter((p) => imageDigest(p.imageID) !== undefined && imageDigest(p.imageID) !== releasedDigest);
  if (other.length > 0) {
    return { check, result: 'fail', detail: `${other.map((p) => `${p.name} runs ${imageDigest(p.imageID)}`).join(', ')}, not the released ${releasedDigest}; restart the Deployment and verify again` };
  }
  return { check, result: 'pass', detail: `the Deployment names the image the chart was released with (${releasedDigest})` };
}

function applicationCheck(facts: ImageFacts, chartVersion: string | undefined): Check {
  const check = 'Argo CD target revision';
  const app = facts.application;
  if (!app) return { check, result: 'fail', detail: `Application ${facts.applicationRef} not found; check --argocd-application NAMESPACE/NAME` };
  const ours = app.sources.filter((s) => s.chart === CHART_NAME);
  if (ours.length === 0) {
    return { check, result: 'fail', detail: `Application ${app.name} has no source with chart ${CHART_NAME} (sources: ${app.sources.map((s) => s.chart ?? s.repoURL ?? '?').join(', ') || 'none'}); name the Application that installs the chart` };
  }
  const wrong = ours.filter((s) => s.targetRevision !== chartVersion);
  if (wrong.length > 0) {
    return {
      check,
      result: 'fail',
      detail: `Application ${app.name} wants ${CHART_NAME} ${wrong.map((s) => s.targetRevision ?? '(no targetRevision)').join(', ')}, but the cluster runs ${chartVersion ?? 'an unknown version'}: ` +
        'sync the Application (and re-apply it with kubectl apply -f if you changed its file), or set targetRevision to the version you mean',
    };
  }
  const synced = app.syncedRevisions.filter((r) => r !== '');
  if (synced.length > 0 && !synced.includes(chartVersion ?? '')) {
    return { check, result: 'fail', detail: `Application ${app.name} targets ${chartVersion} but last synced ${synced.join(', ')}; sync it and verify again` };
  }
  return { check, result: 'pass', detail: `Application ${app.name} targets ${CHART_NAME} ${chartVersion}, the version running` };
}

type Deployment = KubeObject & {
  metadata: { name: string; namespace: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: { selector: { matchLabels?: Record<string, string> }; template: { spec: { containers: { name: string; image?: string }[] } } };
};
type Pod = KubeObject & {
  metadata: { name: string; deletionTimestamp?: string };
  spec: { containers: { name: string; image?: string }[] };
  status?: { phase?: string; containerStatuses?: { name: string; image?: string; imageID?: string }[] };
};
type Application = KubeObject & {
  metadata: { name: string; namespace: string };
  spec?: { source?: ApplicationSource; sources?: ApplicationSource[] };
  status?: { sync?: { revision?: string; revisions?: string[] } };
};

/** Reads the facts of an installation (and the Application `namespace/name`, when given). */
export async function readImageFacts(rest: KubeRest, inst: Installation, applicationRef?: string): Promise<ImageFacts> {
  const deployment = (await rest.get({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: inst.deployment, namespace: inst.namespace } })) as Deployment | undefined;
  if (!deployment) throw new Error(`Deployment ${inst.namespace}/${inst.deployment} disappeared while verifying`);
  const containers = deployment.spec.template.spec.containers;
  const container = containers.find((c) => c.name === 'operator') ?? containers[0];
  const selector = Object.entries(deployment.spec.selector.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`).join(',');
  const pods = (await rest.list<Pod>('v1', 'Pod', { namespace: inst.namespace, labelSelector: selector })).items
    .filter((p) => !p.metadata.deletionTimestamp && p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed')
    .map((p): PodImage => ({
      name: p.metadata.name,
      image: p.spec.containers.find((c) => c.name === container.name)?.image ?? '',
      imageID: p.status?.containerStatuses?.find((s) => s.name === container.name)?.imageID ?? '',
    }));
  const facts: ImageFacts = {
    deployment: `${inst.namespace}/${inst.deployment}`,
    labels: deployment.metadata.labels ?? {},
    releasedImage: deployment.metadata.annotations?.[RELEASED_IMAGE_ANNOTATION] ?? '',
    image: container.image ?? '',
    pods,
  };
  if (applicationRef === undefined) return facts;
  const [namespace, name] = applicationRef.split('/');
  const app = (await rest.get({ apiVersion: 'argoproj.io/v1alpha1', kind: 'Application', metadata: { name, namespace } })) as Application | undefined;
  return {
    ...facts,
    applicationRef,
    application: app
      ? {
        name: `${namespace}/${name}`,
        sources: [...(app.spec?.source ? [app.spec.source] : []), ...(app.spec?.sources ?? [])],
        syncedRevisions: [...(app.status?.sync?.revision ? [app.status.sync.revision] : []), ...(app.status?.sync?.revisions ?? [])],
      }
      : null,
  };
}
