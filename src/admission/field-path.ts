// Field paths written the way the API server writes them in its causes: `spec.models.declared[0]`
// for list items, `spec.resources.requests[cpu]` for map keys, dots between properties.

/** One step into a JSON value: a property of a structured object, a list index or a map key. */
export type PathStep = { readonly property: string } | { readonly index: number } | { readonly key: string };

/** `spec.a[0][key].b`; the root itself is the empty string. */
export function formatPath(steps: readonly PathStep[]): string {
  let out = '';
  for (const step of steps) {
    if ('property' in step) out += out ? `.${step.property}` : step.property;
    else if ('index' in step) out += `[${step.index}]`;
    else out += `[${step.key}]`;
  }
  return out;
}

/**
 * The field a CEL rule's `fieldPath` names, relative to the node that carries the rule: `.a.b`,
 * `['a.b']` and `[0]` steps, as the API server accepts them.
 */
export function parseRelativeFieldPath(fieldPath: string): PathStep[] | undefined {
  const steps: PathStep[] = [];
  const pattern = /\.([A-Za-z_$][\w$-]*)|\['((?:[^'\\]|\\.)*)'\]|\[(\d+)\]/y;
  let at = 0;
  while (at < fieldPath.length) {
    pattern.lastIndex = at;
    const match = pattern.exec(fieldPath);
    if (!match) return undefined;
    if (match[1] !== undefined) steps.push({ property: match[1] });
    else if (match[2] !== undefined) steps.push({ property: match[2].replace(/\\(.)/g, '$1') });
    else steps.push({ index: Number(match[3]) });
    at = pattern.lastIndex;
  }
  return steps;
}

/**
 * The field a webhook message names: the text before the first `: ` when it is a field path
 * (`spec.x`, `metadata.name`, `spec.a[0]`), otherwise undefined. Webhook messages lead with it.
 */
export function leadingField(message: string): string | undefined {
  const match = /^((?:metadata|spec)(?:\.[A-Za-z_][\w-]*|\[[^\]\s]+\])*)(?::| )/.exec(message);
  return match?.[1];
}
