// Pins the OCI registry the chart tests push to (built by scripts/build-tools.sh).
module nebari-llm-serving/tools/registry

go 1.25.0

tool github.com/google/go-containerregistry/cmd/registry

require github.com/google/go-containerregistry v0.21.9 // indirect
