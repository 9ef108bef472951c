// The project's API: the three kinds (schemas, types, constants, defaults), their CRDs and docs.
export * from './common';
export * from './llmmodel';
export * from './passthroughmodel';
export * from './agentdeployment';
export * from './routing';
export * from './crd';
export * from './kinds';
export * from './defaults';
export * from './reference-docs';
export * from './generated';
export * from './v1beta1';
