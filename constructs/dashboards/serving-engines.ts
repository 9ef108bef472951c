// Serving engines: the vLLM metrics of LLMModels, as vLLM's OpenAI server exports them on its
// `/metrics` (names from vLLM's metrics documentation, docs/design/metrics.md, for the V1 engine of
// the image this chart defaults to, v0.11: `vllm:` prefix, labels `model_name` and `engine`).
// `vllm:kv_cache_usage_perc` replaced the V0 `vllm:gpu_cache_usage_perc`. The model pods are
// scraped through the PodMonitor `spec.serving.monitoring.enabled` creates (providers vllm and
// llmd); the `namespace` and `pod` labels are the scrape target's.
import { type DashboardSpec, labelVariable, withLabel } from './builder';

const SELECT = 'namespace=~"$namespace", model_name=~"$model"';
const rate = (series: string) => `rate(${series}[$__rate_interval])`;

export const SERVING_ENGINES: DashboardSpec = {
  uid: 'nls-serving-engines',
  id: 'serving-engines',
  title: 'LLM serving engines (vLLM)',
  description: 'Load and KV cache of the vLLM engines serving LLMModels.',
  variables: [
    labelVariable('namespace', 'namespace', 'vllm:num_requests_running', 'Namespace'),
    labelVariable('model', 'model_name', 'vllm:num_requests_running', 'Served model'),
  ],
  panels: [
    { title: 'Running requests', description: 'Requests in the engine\'s running batch, per pod.', unit: 'short', queries: [{ expr: `sum by (model_name, pod) (vllm:num_requests_running{${SELECT}})` }] },
    { title: 'Waiting requests', description: 'Requests queued for a place in the batch, per pod; a steady queue means too few replicas.', unit: 'short', queries: [{ expr: `sum by (model_name, pod) (vllm:num_requests_waiting{${SELECT}})` }] },
    { title: 'KV cache usage', description: 'Share of KV-cache blocks in use, per pod (1 = full).', unit: 'percentunit', queries: [{ expr: `max by (model_name, pod) (vllm:kv_cache_usage_perc{${SELECT}})` }] },
    { title: 'Preemptions', description: 'Requests preempted per second because the KV cache ran out.', unit: 'short', queries: [{ expr: `sum by (model_name) (${rate(`vllm:num_preemptions_total{${SELECT}}`)})` }] },
    {
      title: 'Tokens per second',
      description: 'Prompt (prefill) and generated tokens the engines processed.',
      unit: 'short',
      queries: [
        { expr: withLabel(`sum by (model_name) (${rate(`vllm:prompt_tokens_total{${SELECT}}`)})`, 'series', 'prompt') },
        { expr: withLabel(`sum by (model_name) (${rate(`vllm:generation_tokens_total{${SELECT}}`)})`, 'series', 'generated') },
      ],
    },
    {
      title: 'Engine time to first token',
      description: '99th percentile inside the engine, without the gateway.',
      unit: 's',
      queries: [{ expr: `histogram_quantile(0.99, sum by (model_name, le) (${rate(`vllm:time_to_first_token_seconds_bucket{${SELECT}}`)}))` }],
    },
  ],
};
