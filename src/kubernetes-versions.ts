// The Kubernetes minors this release claims. The oldest is the chart's kubeVersion floor; the
// newest is the one every test runs on (tools/kube). CI runs the version matrix on each older
// minor, built from tools/kube-<minor>, so the CRDs, examples and chart are proven on every minor
// claimed here. Envoy Gateway 1.8 supports 1.32 to 1.35; 1.32 is not claimed because each minor
// costs CI one more kube-apiserver build (docs/compatibility.md#kubernetes-versions).
export const KUBERNETES_MINORS = ['1.33', '1.34', '1.35'] as const;
export type KubernetesMinor = (typeof KUBERNETES_MINORS)[number];

export const OLDEST_KUBERNETES_MINOR: KubernetesMinor = KUBERNETES_MINORS[0];
export const NEWEST_KUBERNETES_MINOR: KubernetesMinor = KUBERNETES_MINORS[KUBERNETES_MINORS.length - 1];
