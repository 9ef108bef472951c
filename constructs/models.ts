// Static models of a custom build. The LLMModel/PassthroughModel objects are what a GitOps repo
// commits and applies; the operator then derives their gateway objects. The derived objects come
// from the same translation function the operator calls, and are rendered only as a preview (the
// operator owns them in the cluster, and some depend on cluster state such as the API-key Secrets;
// the key Secrets every external policy accepts are those of the build's models, as the operator
// computes them from the models in the cluster).
import { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import type { LLMModel, PassthroughModel } from '../src/api';
import { API_GROUP_VERSION_V1BETA1 } from '../src/api/common';
import { convertTo } from '../src/api/conversion';
import { desiredGatewayObjects, externalEndpointKeySecrets, GatewayContext, GatewayModel, TranslationError } from '../src/translate/gateway';
import { v1alpha1FieldNames } from '../src/webhook/v1alpha1-fields';
import { plainCopy } from './render-context';

/** A static model in either served version (v1alpha1 models are translated as their v1beta1 form). */
export type StaticModel = GatewayModel | LLMModel | PassthroughModel;

function asV1beta1(model: StaticModel): GatewayModel {
  if (model.apiVersion === API_GROUP_VERSION_V1BETA1) return model as GatewayModel;
  const converted = convertTo(model, API_GROUP_VERSION_V1BETA1);
  return (converted.ok ? converted.object : model) as unknown as GatewayModel;
}

export interface StaticModelsProps {
  /** The models, defaults applied, each with a namespace. */
  readonly models: readonly StaticModel[];
  /** Cluster-level gateway settings (the chart's `platform` values). */
  readonly gatewayContext: GatewayContext;
  /** Render the model objects themselves. @default true */
  readonly includeModels?: boolean;
  /** Render the gateway objects the translation derives from each model (a preview). @default false */
  readonly includeDerivedObjects?: boolean;
}

/** Thrown when a model cannot be translated; lists every problem with the model and field. */
export class StaticModelError extends Error {}

/**
 * Every model is translated even when only the models are rendered, so a model the operator could
 * never serve fails the build instead of the cluster.
 */
export class StaticModels extends Construct {
  constructor(scope: Construct, id: string, props: StaticModelsProps) {
    super(scope, id);
    const problems: string[] = [];
    const models = props.models.map(asV1beta1);
    models.forEach((v1beta1, i) => {
      const model = props.models[i];
      const where = `models[${i}] (${model.kind} ${model.metadata.namespace}/${model.metadata.name})`;
      // As the operator does: every model on the external endpoint accepts every such model's keys.
      const peers = externalEndpointKeySecrets(models, v1beta1.metadata.namespace ?? '');
      const translation = desiredGatewayObjects(v1beta1, { ...props.gatewayContext, externalEndpointKeySecrets: peers });
      // A v1alpha1 model's problems name its own fields.
      const own = (message: string) => (model.apiVersion === API_GROUP_VERSION_V1BETA1 ? message : v1alpha1FieldNames(model.kind, message));
      for (const e of translation.errors) problems.push(`${where}: ${own(formatError(e))}`);
      if (translation.errors.length > 0) return;
      const child = new Construct(this, `${model.kind}-${model.metadata.namespace}-${model.metadata.name}`);
      // Our kinds and the translation's objects, typed where they are made (src/api, src/translate/gateway/objects.ts).
      if (props.includeModels ?? true) new ApiObject(child, 'model', plainCopy(model));
      if (props.includeDerivedObjects ?? false) translation.objects.forEach((o, j) => new ApiObject(child, `gateway-${j}`, plainCopy(o)));
    });
    if (problems.length > 0) throw new StaticModelError(problems.join('\n'));
  }
}

/** Cluster settings come from the chart's `platform` values, under `values:` in a build config. */
function formatError(e: TranslationError): string {
  return e.message.replace(/^platform\./, 'values.platform.');
}
