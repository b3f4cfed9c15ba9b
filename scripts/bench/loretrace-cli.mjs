#!/usr/bin/env node
/**
 * `node scripts/bench/loretrace-cli.mjs <dist> <args…>`: the loretrace CLI of the build the bench
 * measures (`--dist`), exactly as bin/loretrace.js runs it for dist/ (`main(argv)` of dist/cli/main.js),
 * so the MCP stdio phase starts the real `loretrace serve --mcp` of that build.
 */
import { pathToFileURL } from 'node:url';
import { join, resolve } from 'node:path';

const [dist, ...argv] = process.argv.slice(2);
const { main } = await import(pathToFileURL(join(resolve(dist), 'cli', 'main.js')).href);
process.exitCode = await main(argv);
