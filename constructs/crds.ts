// Our CustomResourceDefinitions as objects, for the plain deploy/ bundle. The chart itself ships the
// generated crds/ files unchanged (Helm installs them once; `nls crds apply` upgrades them).
import { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import { crdObjects } from '../src/api/kinds';

export interface CustomResourceDefinitionsProps {
  /** The CRD objects. @default every kind's CRD from src/api */
  readonly crds?: readonly Record<string, unknown>[];
}

export class CustomResourceDefinitions extends Construct {
  constructor(scope: Construct, id: string, props: CustomResourceDefinitionsProps = {}) {
    super(scope, id);
    for (const crd of props.crds ?? crdObjects()) {
      const { metadata, ...rest } = crd as { metadata: { name: string } };
      new ApiObject(this, metadata.name, { ...rest, metadata } as never);
    }
  }
}
