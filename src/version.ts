// The product version: package.json is the single source; the chart and the operator read it here.
import pkg from '../package.json';

export const version: string = pkg.version;

/** The project's home page (Chart.yaml `home`; the default base of the alerts' runbook links). */
export const HOME = 'https://github.com/nebari-dev/nebari-llm-serving';
