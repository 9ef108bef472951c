#!/usr/bin/env bash
# The Kubernetes version matrix: on every claimed minor older than the newest (each built from
# tools/kube-<minor>; test/unit/kubernetes-versions.test.ts keeps that list equal to
# src/kubernetes-versions.ts), the integration files that prove the CRDs (the whole case table,
# examples, defaults, upstream objects), the admission differential, the gateway objects against
# the pinned upstream CRDs, and the chart rendered for that version and applied. Same files, same
# expectations as on the newest: the verdicts and messages must not depend on the minor.
# Runs inside scripts/in-netns.sh, like the integration suite.
set -euo pipefail
cd "$(dirname "$0")/.."
files='/(kube-version|crds|admission-differential|gateway-admission|chart)\.test\.ts$'

for dir in tools/kube-1.*/; do
  minor=${dir#tools/kube-}; minor=${minor%/}
  echo "kube-versions: Kubernetes $minor"
  NLS_KUBE_MINOR=$minor NLS_TEST_MODE=apiserver npx jest --selectProjects integration --runInBand --testPathPatterns "$files"
done
