// Our CustomResourceDefinitions as objects, for the plain deploy/ bundle. The chart itself ships the
// generated crds/ files unchanged (Helm installs them once; `nls crds apply` upgrades them).
import { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import type { CrdJson } from '../src/api/crd';
import { crdObjects } from '../src/api/kinds';

export interface CustomResourceDefinitionsProps {
  /** The CRD objects. @default every kind's CRD from src/api */
  readonly crds?: readonly CrdJson[];
}

export class CustomResourceDefinitions extends Construct {
  constructor(scope: Construct, id: string, props: CustomResourceDefinitionsProps = {}) {
    super(scope, id);
    // Plain JSON objects, not the k8s L1 CRD class: its schema type spells the `x-kubernetes-*`
    // keys in camelCase, and these objects are the crds/ files' content as written.
    for (const crd of props.crds ?? crdObjects()) new ApiObject(this, crd.metadata.name, crd);
  }
}
