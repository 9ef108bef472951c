// Gateway-level objects, created once per release and never per model: the GatewayClass, the Gateway
// models attach to, the AI Gateway GatewayConfig (attached by annotation, same namespace as the
// Gateway) and a ClientTrafficPolicy raising Envoy's buffer limit for LLM request bodies.
import { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import { clusterMeta, namespacedMeta } from './labels';
import { cond, RenderContext } from './render-context';

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
    new ApiObject(this, 'Resource', {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'GatewayClass',
      metadata: clusterMeta(ctx, gatewayClassName(ctx), GATEWAY_COMPONENT) as never,
      spec: { controllerName: ctx.value('gateway.gatewayClass.controllerName') },
    });
  }
}

export class Gateway extends Construct {
  constructor(scope: Construct, id: string, props: GatewayProps) {
    super(scope, id);
    const ctx = props.context;
    const className = ctx.helper('gatewayClassOfGateway', (v) => (v as GatewayValues).gateway.gateway.className || gatewayClassName(ctx));
    new ApiObject(this, 'Resource', {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'Gateway',
      metadata: namespacedMeta(ctx, gatewayName(ctx), GATEWAY_COMPONENT, {
        ...ctx.when(cond.truthy('gateway.gatewayConfig.create'), { annotations: { [GATEWAY_CONFIG_ANNOTATION]: gatewayName(ctx) } }),
      }) as never,
      spec: { gatewayClassName: className, ...ctx.block('listeners', 'gateway.gateway.listeners') },
    });
  }
}

export class AIGatewayConfig extends Construct {
  constructor(scope: Construct, id: string, props: GatewayProps) {
    super(scope, id);
    const ctx = props.context;
    new ApiObject(this, 'Resource', {
      apiVersion: 'aigateway.envoyproxy.io/v1beta1',
      kind: 'GatewayConfig',
      // Named like the Gateway it configures, in the same namespace (AI Gateway requires that).
      metadata: namespacedMeta(ctx, gatewayName(ctx), GATEWAY_COMPONENT) as never,
      spec: { extProc: { kubernetes: { ...ctx.block('resources', 'gateway.gatewayConfig.extProcResources') } } },
    });
  }
}

export class GatewayClientTrafficPolicy extends Construct {
  constructor(scope: Construct, id: string, props: GatewayProps) {
    super(scope, id);
    const ctx = props.context;
    new ApiObject(this, 'Resource', {
      apiVersion: 'gateway.envoyproxy.io/v1alpha1',
      kind: 'ClientTrafficPolicy',
      metadata: namespacedMeta(ctx, gatewayName(ctx), GATEWAY_COMPONENT) as never,
      spec: {
        targetRefs: [{ group: 'gateway.networking.k8s.io', kind: 'Gateway', name: gatewayName(ctx) }],
        connection: { bufferLimit: ctx.value('gateway.clientTrafficPolicy.bufferLimit') },
      },
    });
  }
}
