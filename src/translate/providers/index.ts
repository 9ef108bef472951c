// The LLMModel providers this build supports. Adding KAITO, Dynamo, KubeRay or llm-d means
// writing one file implementing LLMProvider and listing it here.
import type { LLMProviderName } from '../../api/llmmodel';
import type { LLMProvider } from './provider';
import { vllmProvider } from './vllm';

export * from './provider';
export { vllmProvider, translateVLLM, vllmObjectNames } from './vllm';

export const providers: Partial<Record<LLMProviderName, LLMProvider>> = {
  vllm: vllmProvider,
};

/** The provider for `name`, or undefined when this build does not implement it yet. */
export function llmProvider(name: LLMProviderName): LLMProvider | undefined {
  return providers[name];
}
