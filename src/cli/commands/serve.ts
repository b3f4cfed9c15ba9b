/**
 * `loretrace serve --lore <dir> --packet <packet.json> --ledger <ledger.jsonl> (--mcp | --http <host:port>)`
 *
 * Thin shell over src/proxy (ProxySession) and src/server (MCP stdio / HTTP). Opens one session for one
 * packet — the packet must validate and use `responder_scoped_repository_search`, else the command refuses
 * to start and says why (exit 1; exit 2 for usage errors) — then serves until the MCP client disconnects
 * or the process gets SIGINT/SIGTERM, and closes the ledger with a `SESSION_CLOSED` record.
 *
 * - `--mcp`: MCP over stdio; stdout carries only the protocol, status lines go to stderr.
 * - `--http 127.0.0.1:0`: HTTP on a loopback port (0 = free port): the REST routes `POST /tools/<name>` and
 *   MCP's Streamable HTTP transport at `/mcp`; when ready, one stderr line `listening on http://127.0.0.1:PORT`. A non-loopback address needs `--allow-remote` and a bearer
 *   token (`--token-file <file>` or the LORETRACE_PROXY_TOKEN environment variable). `--allow-host name:port`
 *   (repeatable) adds an accepted `Host` header value (DNS-rebinding guard, src/server/http.ts).
 * - `--limit name=value` (repeatable) overrides a server limit (docs/PROXY.md "Budgets").
 * - `--signing-key <file>` (or `LORETRACE_SIGNING_KEY`): the runner key that signs the ledger's
 *   `SESSION_CLOSED` record (src/cli/keys.ts, docs/RECEIPTS.md "Authorship"); read before anything starts.
 */
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { LoretraceError } from '../../errors.js';
import { LIMIT_NAMES, parseLimitOverrides } from '../../proxy/limits.js';
import type { CliContext } from '../context.js';
import { action, printJson } from '../context.js';
import { addVaultOptions, inputCap, readInputText, vaultIndexOptions, type VaultCliOptions } from '../vault-options.js';
import { addSigningKeyOption, signerFromOptions } from '../keys.js';
import { refuseFolderNames, refuseLockLikeNames } from '../../receipts/outputs.js';

/** Largest `--token-file` read, in bytes (a bearer token is a line, not a document). */
const TOKEN_FILE_MAX_BYTES = 4096;

interface ServeOptions extends VaultCliOptions {
  packet: string;
  ledger: string;
  mcp?: boolean;
  http?: string;
  allowRemote?: boolean;
  tokenFile?: string;
  allowHost: string[];
  limit: string[];
  signingKey?: string;
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/** Resolve when the process gets SIGINT or SIGTERM (listeners removed afterwards). */
function untilSignal(): { promise: Promise<string>; dispose: () => void } {
  let dispose = () => {};
  const promise = new Promise<string>((resolveSignal) => {
    const on = (sig: string) => () => resolveSignal(sig);
    const onInt = on('SIGINT');
    const onTerm = on('SIGTERM');
    process.once('SIGINT', onInt);
    process.once('SIGTERM', onTerm);
    dispose = () => {
      process.off('SIGINT', onInt);
      process.off('SIGTERM', onTerm);
    };
  });
  return { promise, dispose };
}

/** Register `loretrace serve` on the program; its action writes to `ctx` and sets `ctx.exitCode`. */
export function register(program: Command, ctx: CliContext): void {
  addSigningKeyOption(addVaultOptions(program
    .command('serve')
    .description('serve a research packet\'s sandboxed lore tools over MCP (stdio) or loopback HTTP; every call is recorded in a hash-chained ledger'))
    .requiredOption('--packet <file>', 'responder packet (lore_access.mode responder_scoped_repository_search)')
    .requiredOption('--ledger <file>', 'ledger file to create (JSONL; must not exist)')
    .option('--mcp', 'serve MCP over stdio')
    .option('--http <host:port>', 'serve HTTP, e.g. 127.0.0.1:0 (0 = a free port)')
    .option('--allow-remote', 'allow a non-loopback --http address (needs a bearer token)')
    .option('--token-file <file>', 'bearer token file for --http (default: LORETRACE_PROXY_TOKEN)')
    .option('--allow-host <name:port>', 'with --http: also accept this Host header (repeatable), e.g. a DNS name or a TLS proxy\'s name', collect, [])
    .option('--limit <name=value>', `override a server limit (repeatable), e.g. max_calls=200; names: ${LIMIT_NAMES.join(', ')} (defaults in docs/PROXY.md, "Budgets")`, collect, [])
    .option('--json', 'with --http: print { url, mcp_url, packet_id, snapshot_id, ledger } as JSON on stdout when ready'))
    .action(
      action(ctx, async (opts: ServeOptions) => {
        if (Boolean(opts.mcp) === Boolean(opts.http)) {
          throw new LoretraceError('usage', 'choose exactly one transport: --mcp or --http <host:port>', { expected: '--mcp or --http 127.0.0.1:0' }, 2);
        }
        const limits = parseLimitOverrides(opts.limit);
        // The session and transport modules are loaded only by the command that serves them, so the CLI's
        // other commands (index, search, retrieve …) never load express, zod or the MCP SDK
        // (docs/PERFORMANCE.md "Round 7").
        const httpModule = opts.http !== undefined ? await import('../../server/http.js') : null;
        const target = httpModule && opts.http !== undefined ? httpModule.parseHostPort(opts.http) : null;
        let token: string | undefined;
        if (opts.tokenFile !== undefined) {
          // The CLI's one input reader: a regular file only (a FIFO would block the start forever), at most 4 KiB.
          token = (await readInputText(ctx, opts.tokenFile, 'bearer token', TOKEN_FILE_MAX_BYTES).catch((e: unknown) => {
            throw new LoretraceError('usage', `cannot read --token-file ${opts.tokenFile}: ${(e as Error).message.replace(/^cannot read [^:]*: /, '')}`, { file: opts.tokenFile }, 2);
          })).trim();
        } else if (ctx.env.LORETRACE_PROXY_TOKEN) {
          token = ctx.env.LORETRACE_PROXY_TOKEN;
        }
        if (opts.allowRemote && !target) {
          throw new LoretraceError('usage', '--allow-remote applies to --http only', {}, 2);
        }
        if (opts.allowHost.length > 0 && !target) {
          throw new LoretraceError('usage', '--allow-host applies to --http only', {}, 2);
        }
        for (const h of opts.allowHost) {
          if (!/^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):[0-9]{1,5}$/.test(h)) {
            throw new LoretraceError('usage', `--allow-host ${JSON.stringify(h)} is not name:port`, { expected: 'name:port as the client sends it in the Host header, e.g. lore.example.org:443' }, 2);
          }
        }
        if (target) httpModule!.assertHttpBindAllowed(target.host, { allowRemote: opts.allowRemote === true, ...(token !== undefined ? { token } : {}) });
        // The ledger is an output file like retrieve's: never a folder name, never named like a lock (lock verify
        // and capture check would read it as one) — refused before anything is read or indexed.
        refuseFolderNames([{ given: opts.ledger, option: '--ledger' }]);
        refuseLockLikeNames([{ abs: resolve(ctx.cwd, opts.ledger), option: '--ledger' }]);
        // Same one-line refusal as every other command for an unreadable input, before anything is indexed.
        await readInputText(ctx, opts.packet, 'responder packet');
        const signer = await signerFromOptions(ctx, opts);
        const { openProxySession } = await import('../../proxy/session.js');
        const session = await openProxySession({
          lore: resolve(ctx.cwd, opts.lore),
          packetPath: resolve(ctx.cwd, opts.packet),
          ledgerPath: resolve(ctx.cwd, opts.ledger),
          limits,
          indexOptions: await vaultIndexOptions(ctx, opts),
          maxInputBytes: inputCap(ctx),
          signer,
        });
        const signal = untilSignal();
        try {
          if (target === null) {
            const { serveMcpStdio } = await import('../../server/mcp.js');
            const handle = await serveMcpStdio(session);
            ctx.stderr(`loretrace: serving packet ${session.packet.packet_id} over MCP stdio; ledger ${opts.ledger}\n`);
            await Promise.race([handle.closed, signal.promise]);
            await handle.close();
          } else {
            const http = await httpModule!.startHttpServer(session, {
              host: target.host, port: target.port, allowRemote: opts.allowRemote === true, allowedHosts: opts.allowHost,
              ...(token !== undefined ? { token } : {}),
            });
            ctx.stderr(`listening on ${http.url}\n`);
            if (opts.json) {
              printJson(ctx, { url: http.url, mcp_url: `${http.url}${httpModule!.MCP_HTTP_PATH}`, packet_id: session.packet.packet_id, snapshot_id: session.index.snapshot_id, ledger: resolve(ctx.cwd, opts.ledger) });
            }
            await signal.promise;
            await http.close();
          }
        } finally {
          signal.dispose();
          await session.close();
        }
        ctx.stderr(`loretrace: session closed; ledger ${opts.ledger}${signer ? ` signed by key ${signer.key_id}` : ' (unsigned: no --signing-key)'}\n`);
        return 0;
      }),
    );
}
