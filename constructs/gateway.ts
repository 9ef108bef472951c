// Gateway-level objects, created once per release and never per model: the GatewayClass, the Gateway
// models attach to, the AI Gateway GatewayConfig (attached by annotation, same namespace as the
// Gateway) and a ClientTrafficPolicy raising Envoy's buffer limit for LLM request bodies.
import { Construct } from 'constructs';
import { ClientTrafficPolicy, ClientTrafficPolicySpecConnectionBufferLimit } from '../imports/clienttrafficpolicies-gateway.envoyproxy.io';
import { GatewayConfigV1Beta1 } from '../imports/gatewayconfigs-aigateway.envoyproxy.io';
import { GatewayClass as GatewayClassObject } from '../imports/gatewayclasses-gateway.networking.k8s.io';
import { Gateway as GatewayObject, GatewaySpec } from '../imports/gateways-gateway.networking.k8s.io';
import { kubeObject } from './kube-object';
import { clusterMeta, namespacedMeta } from './labels';
import { cond, helmValue, RenderContext } from './render-context';

export interface GatewayProps {
  /** How values and names are rendered. */
  readonly context: RenderContext;
}

export const GATEWAY_COMPONENT = 'gateway';
export const GATEWAY_CONFIG_ANNOTATION = 'aigateway.envoyproxy.io/gateway-config';

interface GatewayValues {
  gateway: { gatewayClass: { name: string }; gateway: { name: string; className: string } };
}

export function gatewayClassName(ctx: RenderContext): string {
  return ctx.helper('gatewayClassName', (v) => (v as GatewayValues).gateway.gatewayClass.name || ctx.fullname);
}

export function gatewayName(ctx: RenderContext): string {
  return ctx.helper('gatewayName', (v) => (v as GatewayValues).gateway.gateway.name || ctx.fullname);
}

export class GatewayClass extends Construct {
  constructor(scope: Construct, id: string, props: GatewayProps) {
    super(scope, id);
    const ctx = props.context;
    kubeObject(GatewayClassObject, this, 'Resource', {
      metadata: clusterMeta(ctx, gatewayClassName(ctx), GATEWAY_COMPONENT),
      spec: { controllerName: helmValue<string>(ctx.value('gateway.gatewayClass.controllerName')) },
    });
  }
}

export class Gateway extends Construct {
  constructor(scope: Construct, id: string, props: GatewayProps) {
    super(scope, id);
    const ctx = props.context;
    const className = ctx.helper('gatewayClassOfGateway', (v) => (v as GatewayValues).gateway.gateway.className || gatewayClassName(ctx));
    kubeObject(GatewayObject, this, 'Resource', {
      metadata: namespacedMeta(ctx, gatewayName(ctx), GATEWAY_COMPONENT, {
        ...ctx.when(cond.truthy('gateway.gatewayConfig.create'), { annotations: { [GATEWAY_CONFIG_ANNOTATION]: gatewayName(ctx) } }),
      }),
      spec: {
        gatewayClassName: className,
        // Required, and written by the user in the values (free-form objects there): Helm renders them as YAML.
        ...helmValue<Pick<GatewaySpec, 'listeners'>>(ctx.block('listeners', 'gateway.gateway.listeners')),
      },
    });
  }
}

export class AIGatewayConfig extends Construct {
  constructor(scope: Construct, id: string, props: GatewayProps) {
    super(scope, id);
    const ctx = props.context;
    kubeObject(GatewayConfigV1Beta1, this, 'Resource', {
      // Named like the Gateway it configures, in the same namespace (AI Gateway requires that).
      metadata: namespacedMeta(ctx, gatewayName(ctx), GATEWAY_COMPONENT),
      spec: { extProc: { kubernetes: { ...ctx.block('resources', 'gateway.gatewayConfig.extProcResources') } } },
    });
  }
}

export class GatewayClientTrafficPolicy extends Construct {
  constructor(scope: Construct, id: string, props: GatewayProps) {
    super(scope, id);
    const ctx = props.context;
    kubeObject(ClientTrafficPolicy, this, 'Resource', {
      metadata: namespacedMeta(ctx, gatewayName(ctx), GATEWAY_COMPONENT),
      spec: {
        targetRefs: [{ group: 'gateway.networking.k8s.io', kind: 'Gateway', name: gatewayName(ctx) }],
        connection: { bufferLimit: helmValue<ClientTrafficPolicySpecConnectionBufferLimit>(ctx.value('gateway.clientTrafficPolicy.bufferLimit')) },
      },
    });
  }
}
