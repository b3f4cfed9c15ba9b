#!/usr/bin/env node
// Thin launcher: the CLI lives in the compiled library (dist/cli/main.js, built by `npm ci` via `prepare`).
import { main } from '../dist/cli/main.js';

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
