// node test/loaded-modules.mjs <entry.ts> [args...]: runs the entry as `node --import tsx`
// would, with those arguments, and on exit prints to stderr one line, "LOADED <json>": the
// URL of every module it loaded (tsx's onImport). For tests of what a process pulls in.
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { register } from 'tsx/esm/api';

const loaded = new Set();
register({ onImport: (url) => loaded.add(url) });
process.on('exit', () => process.stderr.write(`\nLOADED ${JSON.stringify([...loaded])}\n`));
const entry = path.resolve(process.argv[2]);
process.argv.splice(1, 2, entry); // the entry sees itself as the script, with its own arguments
await import(pathToFileURL(entry).href);
