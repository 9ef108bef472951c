// The images the providers run when neither the model nor the chart names one. Kept apart so the
// chart's values schema (and a build file's types) can name them without the translation code.
export const DEFAULT_VLLM_IMAGE = 'vllm/vllm-openai:v0.11.0';
export const DEFAULT_DOWNLOADER_IMAGE = 'python:3.12-slim';
export const DEFAULT_EPP_IMAGE = 'registry.k8s.io/gateway-api-inference-extension/epp:v1.0.2';
