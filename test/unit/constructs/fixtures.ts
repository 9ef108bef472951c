// Plain rendering helpers for construct tests: values = defaults plus a change.
import { ChartValues, defaultValues } from '../../../src/chart/values-schema';
import { plainObjects } from '../../../src/chart/render';

export type AnyObject = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export function valuesWith(change: (v: ChartValues) => void = () => undefined): ChartValues {
  const v = defaultValues();
  change(v);
  return v;
}

export function render(change?: (v: ChartValues) => void, release?: { releaseName?: string; namespace?: string }): AnyObject[] {
  return plainObjects(valuesWith(change), release) as AnyObject[];
}

export function find(objects: AnyObject[], kind: string, nameSuffix = ''): AnyObject {
  const o = objects.find((x) => x.kind === kind && String(x.metadata.name).endsWith(nameSuffix));
  if (!o) throw new Error(`no ${kind} *${nameSuffix} among ${objects.map((x) => `${x.kind}/${x.metadata.name}`).join(', ')}`);
  return o;
}
