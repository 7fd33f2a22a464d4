// `import { createClient } from 'leasehold'` from plain Node (ESM): the package's entry.
// The sources are TypeScript; tsImport loads them through tsx in a namespace of their own,
// so the importing process's module loading is left as it was (no global loader hooks).
import { tsImport } from 'tsx/esm/api';

const client = await tsImport('./lib/client.ts', import.meta.url);

export const { createClient, validateJob, LeaseholdError, PermanentError, RetryError, SnoozeError } = client;
