/**
 * The Standard Schema v1 surface the dev server needs (zod 4, valibot and arktype
 * implement it), declared here so no validation library becomes a dependency.
 */
export interface StandardSchemaV1<INPUT = unknown, OUTPUT = INPUT> {
  readonly '~standard': {
    readonly version: 1;
    readonly vendor: string;
    readonly validate: (value: unknown) => StandardResult<OUTPUT> | Promise<StandardResult<OUTPUT>>;
    readonly types?: { readonly input: INPUT; readonly output: OUTPUT } | undefined;
  };
}

export type StandardResult<OUTPUT> =
  | { readonly value: OUTPUT; readonly issues?: undefined }
  | { readonly issues: ReadonlyArray<{ readonly message: string; readonly path?: ReadonlyArray<unknown> }> };

export type ValidationOutcome<OUTPUT> = { ok: true; value: OUTPUT } | { ok: false; message: string };

export async function validateWith<OUTPUT>(
  schema: StandardSchemaV1<unknown, OUTPUT>,
  value: unknown,
): Promise<ValidationOutcome<OUTPUT>> {
  const result = await schema['~standard'].validate(value);
  if (result.issues === undefined) return { ok: true, value: result.value };
  return { ok: false, message: result.issues.map((issue) => issue.message).join('; ') };
}

/** A hand-written schema from a check function, for agents that need no library. */
export function schemaFromCheck<OUTPUT>(
  check: (value: unknown) => string | undefined,
): StandardSchemaV1<unknown, OUTPUT> {
  return {
    '~standard': {
      version: 1,
      vendor: 'durable-chat',
      validate(value) {
        const problem = check(value);
        return problem === undefined ? { value: value as OUTPUT } : { issues: [{ message: problem }] };
      },
    },
  };
}
