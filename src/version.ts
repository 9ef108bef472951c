// The product version: package.json is the single source; the chart and the operator read it here.
import pkg from '../package.json';

export const version: string = pkg.version;
