// The v1beta1 shapes of the three kinds (docs/api-versions.md), built from the v1alpha1 blocks.
export * from './llmmodel';
export * from './passthroughmodel';
export * from './agentdeployment';
