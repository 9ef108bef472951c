// The LLMModel providers: one file per provider implementing LLMProvider, listed here.
import type { LLMProviderName } from '../../api/llmmodel';
import { dynamoProvider } from './dynamo';
import { kaitoProvider } from './kaito';
import { kuberayProvider } from './kuberay';
import { llmdProvider } from './llmd';
import type { LLMProvider } from './provider';
import { vllmProvider } from './vllm';

export * from './provider';
export { vllmProvider, translateVLLM, vllmObjectNames } from './vllm';

export const providers: Readonly<Record<LLMProviderName, LLMProvider>> = {
  vllm: vllmProvider,
  kaito: kaitoProvider,
  dynamo: dynamoProvider,
  kuberay: kuberayProvider,
  llmd: llmdProvider,
};

/** The provider serving models whose `spec.provider.name` is `name`. */
export function llmProvider(name: LLMProviderName): LLMProvider {
  return providers[name];
}
