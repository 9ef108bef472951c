// The operator image a chart was released with. The release writes it into the published chart's
// Chart.yaml annotations (beside pinning operator.image in values.yaml); the chart renders it onto
// the operator Deployment, whatever the values say, so `nls verify --images` can tell a running
// image that is not the release's (for example a values file that overrides operator.image).

/** Annotation key, in Chart.yaml and on the operator Deployment: `repository@sha256:…`, or empty for a build from a checkout. */
export const RELEASED_IMAGE_ANNOTATION = 'llm.nebari.dev/released-operator-image';
