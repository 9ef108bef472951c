// Regular expressions with Go's RE2 semantics (the API server's `pattern` and CEL `matches` both
// use Go's regexp), compiled once per pattern.
import { RE2JS } from '@bufbuild/re2';

const compiled = new Map<string, RE2JS>();

/** An RE2 pattern, compiled on first use and cached; `test` finds a match anywhere in the text. */
export function re2(pattern: string): { test(text: string): boolean } {
  let regex = compiled.get(pattern);
  if (!regex) {
    regex = RE2JS.compile(pattern);
    compiled.set(pattern, regex);
  }
  return regex;
}
