// Pins the Prometheus Operator module whose CRD files the tests install (the PrometheusRule CRD,
// example/prometheus-operator-crd/): scripts/build-tools.sh downloads it, builds nothing, and
// links the CRD folder beside the tools' bin directory. Tag v0.93.0 is commit
// f8fafd475f3d132e239432ae6172de60a6cb6516, the same as the ServiceMonitor and PodMonitor CRDs in
// ../shared/upstream-crds/prometheus-operator/v0.93.0.
module nebari-llm-serving/tools/prometheus-operator-crds

go 1.25.0

require github.com/prometheus-operator/prometheus-operator v0.93.0
