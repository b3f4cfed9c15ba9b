/**
 * The stdio framing of the MCP server: newline-delimited JSON-RPC 2.0 (MCP "stdio" transport), written for
 * hostile clients. It replaces the SDK's `StdioServerTransport`, which drops a line that is not JSON (the
 * client waits forever for an answer) and closes the connection silently on a frame over its buffer size.
 *
 * Every line read gets exactly one of:
 * - passed to the MCP server (a well-formed message it can answer);
 * - an error answer written here, and the rejection handed to `onRejected` (the server records it in the
 *   ledger before the answer is written):
 *   - `-32700` parse error — the line is not UTF-8 (the bad byte and its offset), not JSON (the reason, its
 *     column and the line's first characters), or an object of it has a key twice (the project's strict JSON
 *     reader, src/server/strict-json.ts; id `null`: none can be read, or none can be trusted); each message
 *     says what was received and what was expected;
 *   - `-32600` invalid request — JSON, but not a JSON-RPC 2.0 message (a batch array, no `"jsonrpc":"2.0"`,
 *     a bad id), or a frame over `maxFrameBytes` (its bytes are skipped up to the next newline, never
 *     buffered; the id is read from the frame's first 4 KiB when it can be, so the caller's request settles);
 *   - `-32602` invalid params — `params` nests deeper than `MAX_ARGUMENT_DEPTH` + 1 levels (checked before
 *     anything walks it; recorded as a bounded summary), `params` is not an object, `tools/call` has no
 *     string `name` or an `arguments` that is not an object, `resources/read` no string `uri`, or
 *     `resources/list` a `cursor` that is not a string ({@link mcpParamsProblem});
 *   - `-32601` method not found — a request for a method the server does not offer.
 * Messages are one line each, echo no more than 64 escaped characters of the input, and carry no stack.
 * The connection stays open after any rejection.
 */
import type { Readable, Writable } from 'node:stream';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { MAX_ARGUMENT_DEPTH, nestsDeeperThan } from '../proxy/limits.js';
import { shownInput } from '../proxy/refusals.js';
import { readClientJson } from './strict-json.js';
import { isJsonObject } from '../contracts/json-object.js';

/** What a parse error says the server expected: MCP's stdio transport carries one JSON-RPC message per line, UTF-8 encoded. */
const STDIO_EXPECTED = 'expected one JSON-RPC 2.0 message per line, as UTF-8 JSON (MCP stdio transport)';

/** JSON-RPC error codes used here (JSON-RPC 2.0 §5.1). */
export const JSONRPC_PARSE_ERROR = -32700;
export const JSONRPC_INVALID_REQUEST = -32600;
export const JSONRPC_METHOD_NOT_FOUND = -32601;
export const JSONRPC_INVALID_PARAMS = -32602;

/** Largest frame read by default, in bytes (4 MiB): larger ones are answered `-32600` and skipped. */
export const DEFAULT_MAX_FRAME_BYTES = 4 * 1024 * 1024;

/** Why a frame was answered by the transport itself (the ledger `reason`). */
export type FrameRejectionReason = 'parse_error' | 'invalid_request' | 'frame_too_large' | 'invalid_params' | 'method_not_found';

/** A frame the transport answered itself. */
export interface FrameRejection {
  reason: FrameRejectionReason;
  /** JSON-RPC error code of the answer. */
  code: number;
  /** The one-line message of the answer. */
  message: string;
  /** The request id answered (null when none could be read). */
  id: string | number | null;
  /** The method named, when one could be read (else null). */
  method: string | null;
  /** Bytes of the frame. */
  bytes: number;
  /** The request's `params` when it parsed (for the ledger, which digests long strings), else a summary. */
  params: unknown;
}

/** Options of {@link LineStdioTransport}. */
export interface LineStdioOptions {
  /** Largest frame, in bytes; default {@link DEFAULT_MAX_FRAME_BYTES}. */
  maxFrameBytes?: number;
  /** Methods a request may name, read at each request (others get `-32601`). */
  methods: () => readonly string[];
  /** Called for each rejected frame before its answer is written (e.g. to record it). Errors are swallowed. */
  onRejected?: (rejection: FrameRejection) => Promise<void>;
}

const ID_SNIFF_BYTES = 4096;

/** How a JSON value is named in a message: `an array`, `null`, `a number` … */
function kindOf(v: unknown): string {
  return Array.isArray(v) ? 'an array' : v === null ? 'null' : typeof v === 'object' ? 'an object' : `a ${typeof v}`;
}

/**
 * The one-line `-32602` message for the `params` of a request the server answers with lore — `tools/call`
 * (a string `name`, an object `arguments` when present), `resources/read` (a string `uri`), `resources/list`
 * (a string `cursor` when present) — or null when they are well-formed (`params` itself is known to be an
 * object or absent). The SDK's request schemas would refuse them too, but with `-32603` and a multi-line zod
 * dump and before any loretrace code runs, so the request would never reach the ledger: the stdio framing
 * answers these frames itself, and the MCP server's own handlers (src/server/mcp.ts, reached over Streamable
 * HTTP and in-process transports) check them with this same function before the session is called.
 */
export function mcpParamsProblem(method: string, params: unknown): string | null {
  const p = (isJsonObject(params) ? params : {}) as Record<string, unknown>;
  if (method === 'tools/call') {
    if (typeof p.name !== 'string') return 'invalid params: tools/call needs "name", a string (the tool to call)';
    if (p.arguments !== undefined && !isJsonObject(p.arguments)) return `invalid params: "arguments" of tools/call must be an object, not ${kindOf(p.arguments)}`;
  } else if (method === 'resources/read') {
    if (typeof p.uri !== 'string') return `invalid params: resources/read needs "uri", a string (the lore:// URI of the note to read)${p.uri === undefined ? '' : `, not ${kindOf(p.uri)}`}`;
  } else if (method === 'resources/list') {
    if (p.cursor !== undefined && typeof p.cursor !== 'string') return `invalid params: "cursor" of resources/list must be a string, not ${kindOf(p.cursor)}`;
  }
  return null;
}

/**
 * The `-32602` answer to a request whose `params` no method may take, or null: `params` nested deeper than
 * `MAX_ARGUMENT_DEPTH` + 1 levels (checked before anything walks it — the SDK's schemas, the tools' validators, the
 * ledger digest; recorded as a bounded summary, `{ $omitted: 'nested', levels_over }`), or `params` present and not
 * an object (an array, a number, a string, null; JSON-RPC 2.0 §4.2 allows by-position arrays, MCP does not). `message`
 * is the one-line answer (`invalid params: "params" of "tools/call" must be an object, not an array`), `params` what
 * the ledger records. The stdio framing and the Streamable HTTP endpoint (src/server/http.ts) both answer with it,
 * so a request is answered and recorded alike on either transport.
 */
export function paramsShapeProblem(method: string, params: unknown): { message: string; params: unknown } | null {
  // tools/call params are { name, arguments }: arguments may nest MAX_ARGUMENT_DEPTH levels, params one more.
  if (nestsDeeperThan(params, MAX_ARGUMENT_DEPTH + 1)) {
    return { message: `invalid params: "params" of ${shownInput(method, 64)} are nested deeper than ${MAX_ARGUMENT_DEPTH + 1} levels (tool arguments at most ${MAX_ARGUMENT_DEPTH})`, params: { $omitted: 'nested', levels_over: MAX_ARGUMENT_DEPTH + 1 } };
  }
  if (params !== undefined && !isJsonObject(params)) return { message: `invalid params: "params" of ${shownInput(method, 64)} must be an object, not ${kindOf(params)}`, params };
  return null;
}

/**
 * {@link paramsShapeProblem} of a parsed JSON-RPC message that is a request (`"jsonrpc": "2.0"`, a string `method`,
 * a string or number `id`), with its id and method; null for anything else (a notification, a response, a batch,
 * a message the SDK's own parse refuses) and for well-shaped params.
 */
export function requestParamsProblem(value: unknown): { id: string | number; method: string; message: string; params: unknown } | null {
  if (!isJsonObject(value) || value.jsonrpc !== '2.0' || typeof value.method !== 'string' || !isId(value.id)) return null;
  const shape = paramsShapeProblem(value.method, value.params);
  return shape === null ? null : { id: value.id, method: value.method, ...shape };
}

/** A JSON-RPC id as JSON-RPC 2.0 allows it (string or number; null is not an id to answer with). */
function isId(v: unknown): v is string | number {
  return typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v));
}

/** The `"id"` of a frame too large to parse, read from its first bytes (a number or a short string), or null. */
export function sniffId(head: string): string | number | null {
  const m = /"id"\s*:\s*(-?\d{1,15}(?![\d.eE])|"((?:[^"\\]|\\.){0,128})")/.exec(head);
  if (!m) return null;
  if (m[2] !== undefined) {
    try {
      return JSON.parse(`"${m[2]}"`) as string;
    } catch {
      return null;
    }
  }
  return Number(m[1]);
}

/**
 * Newline-delimited JSON-RPC over a readable and a writable stream (module comment). Implements the SDK's
 * `Transport`, so `server.connect(new LineStdioTransport(...))` works as with the SDK's own.
 */
export class LineStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private readonly maxFrameBytes: number;
  private chunks: Buffer[] = [];
  private buffered = 0;
  /** While skipping an oversized frame: its first bytes and its size so far. */
  private skipping: { head: string; bytes: number } | null = null;
  private readonly pending = new Set<Promise<void>>();
  private started = false;
  private closed = false;

  constructor(
    private readonly stdin: Readable,
    private readonly stdout: Writable,
    private readonly options: LineStdioOptions,
  ) {
    this.maxFrameBytes = options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES;
  }

  private readonly onData = (chunk: Buffer | string): void => {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    let start = 0;
    for (;;) {
      const nl = buf.indexOf(0x0a, start);
      const piece = nl < 0 ? buf.subarray(start) : buf.subarray(start, nl);
      this.take(piece);
      if (nl < 0) break;
      this.endFrame();
      start = nl + 1;
    }
  };

  private readonly onError = (error: Error): void => {
    this.onerror?.(error);
  };

  /** Add bytes of the current frame (switching to skip mode past the cap). */
  private take(piece: Buffer): void {
    if (piece.length === 0) return;
    if (this.skipping) {
      this.skipping.bytes += piece.length;
      return;
    }
    if (this.buffered + piece.length > this.maxFrameBytes) {
      const head = Buffer.concat([...this.chunks, piece.subarray(0, ID_SNIFF_BYTES)]).subarray(0, ID_SNIFF_BYTES).toString('utf8');
      this.skipping = { head, bytes: this.buffered + piece.length };
      this.chunks = [];
      this.buffered = 0;
      return;
    }
    this.chunks.push(piece);
    this.buffered += piece.length;
  }

  /** A newline (or the end of input) ends the current frame. */
  private endFrame(): void {
    if (this.skipping) {
      const { head, bytes } = this.skipping;
      this.skipping = null;
      this.reject({
        reason: 'frame_too_large', code: JSONRPC_INVALID_REQUEST, id: sniffId(head), method: null, bytes,
        message: `request too large: the frame is ${bytes} bytes, over the ${this.maxFrameBytes}-byte limit; it was not read`,
        params: { $omitted: 'frame', bytes },
      });
      return;
    }
    const frame = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks);
    this.chunks = [];
    this.buffered = 0;
    this.handleFrame(frame);
  }

  /** Classify one complete frame: pass it on, or answer it here. */
  private handleFrame(raw: Buffer): void {
    const frame = raw.length > 0 && raw[raw.length - 1] === 0x0d ? raw.subarray(0, raw.length - 1) : raw;
    if (frame.length === 0 || /^\s*$/.test(frame.toString('latin1'))) return;
    const bytes = frame.length;
    const read = readClientJson(frame, 'the line');
    if (!read.ok) {
      // A repeated key parses, but JSON.parse would keep only its last value: refused like bytes that do not parse.
      // What was received (the reader's reason, the size, the start of a line that decodes) and what was expected.
      const message = read.problem === 'duplicate_key' ? `parse error: ${read.message} (${bytes} bytes)`
        : read.problem === 'not_utf8' ? `parse error: ${read.message} (${bytes} bytes); ${STDIO_EXPECTED}`
          : `parse error: ${read.message} (${bytes} bytes, starting ${shownInput(frame.subarray(0, 256).toString('utf8'), 32)}); ${STDIO_EXPECTED}`;
      this.reject({ reason: 'parse_error', code: JSONRPC_PARSE_ERROR, id: null, method: null, bytes, message, params: { $omitted: 'frame', bytes } });
      return;
    }
    const value = read.value;
    const problem = this.requestProblem(value, bytes);
    if (problem) {
      this.reject(problem);
      return;
    }
    const parsed = JSONRPCMessageSchema.safeParse(value);
    if (!parsed.success) {
      const id = isJsonObject(value) && isId(value.id) ? value.id : null;
      this.reject({ reason: 'invalid_request', code: JSONRPC_INVALID_REQUEST, id, method: null, bytes, message: 'invalid request: not a JSON-RPC 2.0 request, notification or response', params: { $omitted: 'frame', bytes } });
      return;
    }
    this.onmessage?.(parsed.data);
  }

  /** The rejection of a parsed frame that is not a request the server may answer, or null. */
  private requestProblem(value: unknown, bytes: number): FrameRejection | null {
    const at = (reason: FrameRejectionReason, code: number, id: string | number | null, method: string | null, message: string, params: unknown): FrameRejection =>
      ({ reason, code, id, method, bytes, message, params });
    if (!isJsonObject(value)) {
      return at('invalid_request', JSONRPC_INVALID_REQUEST, null, null, `invalid request: expected one JSON-RPC 2.0 object per line, got ${Array.isArray(value) ? 'an array (batches are not accepted)' : `a JSON ${value === null ? 'null' : typeof value}`}`, null);
    }
    const id = isId(value.id) ? value.id : null;
    const method = typeof value.method === 'string' ? value.method : null;
    if (value.jsonrpc !== '2.0') return at('invalid_request', JSONRPC_INVALID_REQUEST, id, method, 'invalid request: "jsonrpc" must be "2.0"', value.params ?? null);
    if (method === null) return null; // a response from the client (or invalid: left to the schema check)
    if (!('id' in value)) return null; // a notification: never answered
    if (!isId(value.id)) return at('invalid_request', JSONRPC_INVALID_REQUEST, null, method, 'invalid request: "id" must be a string or a number', value.params ?? null);
    const shape = paramsShapeProblem(method, value.params);
    if (shape !== null) return at('invalid_params', JSONRPC_INVALID_PARAMS, id, method, shape.message, shape.params);
    const offered = this.options.methods();
    if (!offered.includes(method)) {
      return at('method_not_found', JSONRPC_METHOD_NOT_FOUND, id, method, `method not found: ${shownInput(method, 64)}; this server offers ${offered.join(', ')}`, value.params ?? null);
    }
    const bad = mcpParamsProblem(method, value.params);
    if (bad !== null) return at('invalid_params', JSONRPC_INVALID_PARAMS, id, method, bad, value.params ?? null);
    return null;
  }

  /** Record a rejection (through `onRejected`), then write its error answer (only a request with an id, or an unreadable frame, is answered). */
  private reject(r: FrameRejection): void {
    const work = (async () => {
      try {
        await this.options.onRejected?.(r);
      } catch (e) {
        this.onerror?.(e instanceof Error ? e : new Error(String(e)));
      }
      // Written directly, not through `send` (which a server may wrap to count its own answers).
      await this.writeMessage({ jsonrpc: '2.0', id: r.id as string | number, error: { code: r.code, message: r.message } } as JSONRPCMessage);
    })();
    this.pending.add(work);
    void work.finally(() => this.pending.delete(work));
  }

  /** Resolves once every rejection read so far has been recorded and answered. */
  async settled(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }

  /** Start reading; at the end of input a last frame without its newline is read (or, oversized, answered) too. */
  async start(): Promise<void> {
    if (this.started) throw new Error('LineStdioTransport already started');
    this.started = true;
    this.stdin.on('data', this.onData);
    this.stdin.on('error', this.onError);
    this.stdin.once('end', () => {
      if (this.skipping || this.buffered > 0) this.endFrame();
    });
  }

  /** Write one message as one line; resolves when the stream took it (or has gone away). */
  send(message: JSONRPCMessage): Promise<void> {
    return this.writeMessage(message);
  }

  private writeMessage(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve) => {
      if (this.stdout.destroyed || this.stdout.writableEnded) return resolve();
      if (this.stdout.write(JSON.stringify(message) + '\n')) resolve();
      else this.stdout.once('drain', () => resolve());
    });
  }

  /** Stop reading and report the close. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.stdin.off('data', this.onData);
    this.stdin.off('error', this.onError);
    if (this.stdin.listenerCount('data') === 0) this.stdin.pause();
    this.chunks = [];
    this.skipping = null;
    this.onclose?.();
  }
}
