#!/usr/bin/env node
// Thin launcher: the CLI lives in the compiled library (dist/cli/main.js, built by `npm ci` via `prepare`).
import { main } from '../dist/cli/main.js';
main(process.argv.slice(2)).then((code) => { process.exitCode = code; });
