#!/usr/bin/env node
// Thin launcher: the CLI lives in the compiled library (dist/cli/main.js). The published package ships
// dist/; in a checkout, `npm run build` writes it (`npm test` and `npm run demo` build first).
import { existsSync } from 'node:fs';

const MAIN = new URL('../dist/cli/main.js', import.meta.url);
if (!existsSync(MAIN)) {
  process.stderr.write('loretrace: dist/cli/main.js is missing: this checkout is not built; run `npm run build` [not_built]\n');
  process.exit(2);
}
const { main } = await import(MAIN.href);

// A reader that goes away early (`loretrace search … --json | head`) is not an error worth a stack trace:
// stop writing and leave quietly, as other Unix tools do.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (err) => {
    if (err && err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw err;
  });
}

main(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
