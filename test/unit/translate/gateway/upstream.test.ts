// The translation's objects against the types generated from the pinned upstream CRDs (imports/):
// each object's apiVersion and kind are those of the generated class its spec is checked against
// (objects.ts), and the compile-time check itself rejects what it should (`npm run typecheck`
// fails if an @ts-expect-error below stops being an error).
import { AiGatewayRouteV1Beta1 } from '../../../../imports/aigatewayroutes-aigateway.envoyproxy.io';
import { AiServiceBackendV1Beta1 } from '../../../../imports/aiservicebackends-aigateway.envoyproxy.io';
import { Backend } from '../../../../imports/backends-gateway.envoyproxy.io';
import { BackendSecurityPolicyV1Beta1 } from '../../../../imports/backendsecuritypolicies-aigateway.envoyproxy.io';
import { BackendTlsPolicy } from '../../../../imports/backendtlspolicies-gateway.networking.k8s.io';
import { BackendTrafficPolicy } from '../../../../imports/backendtrafficpolicies-gateway.envoyproxy.io';
import { InferencePool } from '../../../../imports/inferencepools-inference.networking.k8s.io';
import { SecurityPolicy } from '../../../../imports/securitypolicies-gateway.envoyproxy.io';
import { desiredGatewayObjects, type GeneratedGatewayObject } from '../../../../src/translate/gateway';
import type { Conforms } from '../../../../src/translate/gateway/upstream';
import { caseContext, modelMatrix } from './model-matrix';

/** The generated class whose spec type each kind's spec is checked against in objects.ts. */
const UPSTREAM_CLASS: Record<GeneratedGatewayObject['kind'], { readonly GVK: { apiVersion: string; kind: string } }> = {
  AIGatewayRoute: AiGatewayRouteV1Beta1,
  AIServiceBackend: AiServiceBackendV1Beta1,
  Backend,
  BackendSecurityPolicy: BackendSecurityPolicyV1Beta1,
  BackendTLSPolicy: BackendTlsPolicy,
  BackendTrafficPolicy,
  InferencePool,
  SecurityPolicy,
};

test('every translated object has the apiVersion and kind of the upstream type it is checked against', () => {
  const objects = modelMatrix.flatMap((c) => desiredGatewayObjects(c.model, caseContext(c)).objects);
  expect(new Set(objects.map((o) => o.kind))).toEqual(new Set(Object.keys(UPSTREAM_CLASS)));
  for (const o of objects) expect({ apiVersion: o.apiVersion, kind: o.kind }).toEqual(UPSTREAM_CLASS[o.kind].GVK);
});

// --- Conforms, at compile time ---------------------------------------------------------------
enum Mode { Fast = 'Fast', Safe = 'Safe' }
interface Upstream {
  readonly name: string;
  readonly mode?: Mode;
  readonly clientIdHeader?: string;
  readonly items?: { readonly port: number; readonly weight?: number }[];
  readonly labels?: { [key: string]: string };
}

export type Accepted = Conforms<{
  readonly name: string;
  readonly mode: 'Safe'; // an enum member by its value
  readonly clientIDHeader: string; // cdk8s import camelCases names: matched ignoring case
  readonly items: readonly [{ readonly port: 443 }];
  readonly labels: Record<string, string>;
}, Upstream>;
// @ts-expect-error a field the upstream type does not have
export type UnknownField = Conforms<{ readonly name: string; readonly nmae: string }, Upstream>;
// @ts-expect-error a value outside the enum
export type WrongEnum = Conforms<{ readonly name: string; readonly mode: 'Slow' }, Upstream>;
// @ts-expect-error a nested field of the wrong type
export type WrongNested = Conforms<{ readonly name: string; readonly items: ReadonlyArray<{ readonly port: string }> }, Upstream>;
// @ts-expect-error a required field missing
export type MissingRequired = Conforms<{ readonly mode: 'Fast' }, Upstream>;
