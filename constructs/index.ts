// The cdk8s constructs the chart and the plain bundles are synthesized from.
export * from './render-context';
export * from './kube-object';
export * from './helpers';
export * from './names';
export * from './labels';
export * from './namespace';
export * from './operator';
export * from './rbac';
export * from './webhooks';
export * from './webhook-check';
export * from './certificates';
export * from './network-policy';
export * from './service-monitor';
export * from './gateway';
export * from './crds';
export * from './models';
export * from './portal';
