// Compile-time checks of the translator's object shapes (objects.ts) against the types `cdk8s import`
// generated from the released CRDs (imports/, `npm run import`). Types only: nothing here exists at
// runtime, and the translation never loads cdk8s.
//
// The generated types differ from the JSON in two ways the checks allow for: enums are TypeScript
// enums (compared by their string values), and field names are camelCased (`anthropicAPIKey`
// becomes `anthropicApiKey`; the generated toJson maps them back), so names match ignoring case.

/** U's field for the JSON key K: the same name, else the one equal to it ignoring case. */
type FieldOf<U, K> = K extends keyof U
  ? U[K]
  : { [P in keyof U]: Lowercase<P & string> extends Lowercase<K & string> ? U[P] : never }[keyof U];

/** The names (lower case) of the fields U requires; index signatures require none. */
type RequiredKeys<U> = { [K in keyof U]-?: string extends K ? never : undefined extends U[K] ? never : Lowercase<K & string> }[keyof U];

/** A JSON value of type T checked against the generated type U: U where T may go, never where it may not. */
type Checked<T, U> = [U] extends [never]
  ? never
  : T extends undefined
    ? undefined
    : T extends readonly (infer A)[]
      ? U extends readonly (infer B)[] ? readonly Checked<A, B>[] : never
      : T extends object
        ? Within<T, U>
        : U extends string ? `${U}` : U;

/** Every field of T checked against U's, plus (as lower-case names) the fields U requires and T lacks. */
type Within<T, U> = { readonly [K in keyof T]: Checked<T[K], NonNullable<FieldOf<U, K>>> } & {
  readonly [K in Exclude<RequiredKeys<U>, Lowercase<keyof T & string>>]: unknown;
};

/**
 * T, checked against the upstream type U: every field T sets exists in U (at every depth) with a
 * compatible type, and T sets every field U requires. A mismatch fails to compile where T is written.
 */
export type Conforms<T extends Within<T, U>, U> = T;
