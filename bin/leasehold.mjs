#!/usr/bin/env node
// `npx leasehold <verb>`: the command line. The sources are TypeScript, loaded through tsx.
import { register } from 'tsx/esm/api';

register();
await import('../worker/bin/cli.ts');
