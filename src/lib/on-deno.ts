/** Whether this code runs on Deno (its namespace is there): where the platform's own behaviour differs (docs/decisions/deno.md). */
export const onDeno = (globalThis as { Deno?: unknown }).Deno !== undefined;
