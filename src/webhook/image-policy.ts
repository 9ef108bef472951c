// The images tenants may make the operator run (chart value `webhook.allowedImages`, passed as
// NLS_ALLOWED_IMAGES): `spec.serving.image` of an LLMModel, images in its provider overrides, and
// `spec.container.image` of an AgentDeployment. Whoever may write these fields chooses the code
// that runs in the release namespace next to its Secrets' consumers, so an installation that does
// not trust every model author with that can pin the registries. Empty allows every image.

/**
 * Whether `entry` is usable: a prefix ending in `/`, `:` or `@` (a registry, a repository path, a
 * repository's tags or digests), or a whole image reference matched exactly. A prefix without such
 * an ending would let `registry.example.com` admit `registry.example.com.attacker.example/x`.
 */
export function allowedImageEntryProblem(entry: string): string | undefined {
  if (entry === '' || /\s|,/.test(entry)) return `"${entry}" is not an image prefix or reference (empty, or has whitespace or a comma)`;
  return undefined;
}

/** True when `image` is allowed by `allowed` (empty allows all). */
export function imageAllowed(image: string, allowed: readonly string[]): boolean {
  if (allowed.length === 0) return true;
  return allowed.some((entry) => (/[/:@]$/.test(entry) ? image.startsWith(entry) : image === entry));
}

/** The denial for an image outside the list, naming the field, the list and the fix; undefined when allowed. */
export function imageProblem(image: string, field: string, allowed: readonly string[]): string | undefined {
  if (imageAllowed(image, allowed)) return undefined;
  return (
    `${field}: image "${image}" is not allowed by this installation (allowed: ${allowed.map((a) => `"${a}"`).join(', ')}); ` +
    'use an image from those, or ask an administrator to add it to the chart value webhook.allowedImages'
  );
}
