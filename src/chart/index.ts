// The chart writer: values schema, template writer, chart files and plain bundles.
export * from './values-schema';
export * from './values-file';
export * from './template-writer';
export * from './layout';
export * from './render';
export * from './bundles';
export * from './argocd';
export * from './files';
export * from './ci-values';
export * from './merge-values';
