// The chart's Grafana dashboards, in the order they are rendered (constructs/grafana-dashboards.ts).
import { GATEWAY_OVERVIEW } from './gateway-overview';
import { OPERATOR } from './operator';
import { PORTAL } from './portal';
import { SERVING_ENGINES } from './serving-engines';
import { USAGE } from './usage';

export * from './builder';
export const DASHBOARDS = [GATEWAY_OVERVIEW, USAGE, SERVING_ENGINES, OPERATOR, PORTAL] as const;
