import { createSocket } from 'node:dgram';
import { request as httpRequest, IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import { connect as h2connect, ClientHttp2Session, constants as h2 } from 'node:http2';
import { request as httpsRequest } from 'node:https';
import { connect as netConnect, isIP, isIPv6, Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import type { CheckDefinition } from './checks';

/**
 * One run of a health check, as the public service's agent runs it (agent/checks/check.go): the
 * status it reports and its output, worded as the public service words them (Go's error texts).
 */
export interface ProbeResult {
  readonly status: 'passing' | 'warning' | 'critical';
  readonly output: string;
}

/** What every probe is given: the definition, how long it may take, how much output it keeps. */
export interface ProbeOptions {
  readonly definition: CheckDefinition;
  readonly timeoutMs: number;
  readonly outputMax: number;
}

export type Probe = (options: ProbeOptions) => Promise<ProbeResult>;

/** What the public service's HTTP check sends unless the check's headers say otherwise. */
const USER_AGENT = 'Consul Health Check';
const ACCEPT = 'text/plain, text/*, */*';
/** Go's http.Client follows at most 10 redirects (to any host), as the public service's check does. */
const MAX_REDIRECTS = 10;
/** Headers Go's client drops when a redirect leads to another host. */
const SENSITIVE_HEADERS = ['authorization', 'www-authenticate', 'cookie', 'cookie2'];

const critical = (output: string): ProbeResult => ({ status: 'critical', output });
const passing = (output: string): ProbeResult => ({ status: 'passing', output });

class ProbeTimeout extends Error {}

/** OpenSSL's codes for a certificate no trusted CA signed. */
const UNKNOWN_AUTHORITY = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'SELF_SIGNED_CERT_IN_CHAIN', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY', 'UNABLE_TO_GET_ISSUER_CERT',
]);

/** Go's words for a certificate that fails verification, or undefined for other errors. */
function goTlsError(e: NodeJS.ErrnoException & { reason?: string }): string | undefined {
  const prefix = 'tls: failed to verify certificate: x509:';
  if (UNKNOWN_AUTHORITY.has(e.code ?? '')) return `${prefix} certificate signed by unknown authority`;
  if (e.code === 'CERT_HAS_EXPIRED' || e.code === 'CERT_NOT_YET_VALID') return `${prefix} certificate has expired or is not yet valid`;
  if (e.code === 'ERR_TLS_CERT_ALTNAME_INVALID') return `${prefix} ${e.reason ?? e.message}`;
  return undefined;
}

/** Go's words for a failed socket operation ("dial tcp 127.0.0.1:1: connect: connection refused"). */
export function goNetError(op: 'dial' | 'read', network: string, address: string, err: unknown): string {
  if (err instanceof ProbeTimeout) return `${op} ${network} ${address}: i/o timeout`;
  const e = err as NodeJS.ErrnoException & { hostname?: string };
  const tls = goTlsError(e);
  if (tls) return tls;
  const syscall = op === 'dial' ? 'connect' : 'read';
  switch (e.code) {
    case 'ECONNREFUSED': return `${op} ${network} ${address}: ${syscall}: connection refused`;
    case 'ECONNRESET': return `${op} ${network} ${address}: read: connection reset by peer`;
    case 'EHOSTUNREACH': return `${op} ${network} ${address}: ${syscall}: no route to host`;
    case 'ENETUNREACH': return `${op} ${network} ${address}: ${syscall}: network is unreachable`;
    case 'ETIMEDOUT': return `${op} ${network} ${address}: i/o timeout`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN': return `${op} ${network}: lookup ${e.hostname ?? address}: no such host`;
    default: return `${op} ${network} ${address}: ${e.message}`;
  }
}

/** Go's net.SplitHostPort: "host:port" or "[v6]:port"; undefined when it is not one. */
export function splitHostPort(address: string): { host: string; port: number } | undefined {
  const m = /^(?:\[([^\]]+)\]|([^:[\]]*)):(\d{1,5})$/.exec(address);
  if (!m) return undefined;
  const port = Number(m[3]);
  return port <= 65535 ? { host: m[1] ?? m[2], port } : undefined;
}

/** The TLS options of a check: certificates verified unless TLSSkipVerify, SNI from TLSServerName or the host. */
function tlsOptions(d: CheckDefinition, host: string): { rejectUnauthorized: boolean; servername?: string } {
  const servername = d.TLSServerName || (isIP(host) ? undefined : host);
  return { rejectUnauthorized: !d.TLSSkipVerify, ...(servername ? { servername } : {}) };
}

/**
 * Runs `work` with a deadline: the cleanup it returns runs either way; at the deadline the promise
 * rejects with ProbeTimeout, unless `atDeadline` answers a value to resolve with instead.
 */
function withDeadline<T>(
  ms: number, work: (settle: (value: T) => void, fail: (err: unknown) => void) => () => void, atDeadline?: () => T | undefined,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let done = false;
    let cleanup: () => void = () => undefined;
    const finish = (fn: () => void) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      cleanup();
      fn();
    };
    const timer = setTimeout(() => {
      const value = atDeadline?.();
      finish(() => (value === undefined ? reject(new ProbeTimeout()) : resolve(value)));
    }, Math.max(1, ms));
    cleanup = work((value) => finish(() => resolve(value)), (err) => finish(() => reject(err)));
  });
}

/** Go's capitalized method in client errors ("Get", "Post"). */
const goMethod = (method: string) => method.charAt(0).toUpperCase() + method.slice(1).toLowerCase();

interface HttpAnswer {
  readonly statusCode: number;
  readonly status: string;
  readonly location?: string;
  readonly body: string;
}

/**
 * One HTTP exchange without keep-alive (as the public service's check transport): at most
 * `outputMax` bytes of the body are read, then the connection is closed.
 */
function exchange(
  url: URL, method: string, headers: OutgoingHttpHeaders, body: string, d: CheckDefinition, ms: number, outputMax: number,
): Promise<HttpAnswer> {
  // Set once the headers are in: at the deadline, the status counts with the output read so far (as Go's client).
  let answer: (() => HttpAnswer) | undefined;
  return withDeadline<HttpAnswer>(ms, (settle, fail) => {
    const https = url.protocol === 'https:';
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const req = (https ? httpsRequest : httpRequest)({
      protocol: url.protocol,
      hostname: host,
      port: url.port || (https ? 443 : 80),
      path: `${url.pathname}${url.search}`,
      method,
      headers,
      agent: false,
      ...(https ? tlsOptions(d, host) : {}),
    });
    const chunks: Buffer[] = [];
    let kept = 0;
    req.on('response', (res: IncomingMessage) => {
      answer = () => ({
        statusCode: res.statusCode ?? 0,
        status: `${res.statusCode} ${res.statusMessage ?? ''}`.trimEnd(),
        location: res.headers.location,
        body: Buffer.concat(chunks).toString(),
      });
      res.on('data', (chunk: Buffer) => {
        const room = outputMax - kept;
        if (room > 0) chunks.push(chunk.length > room ? chunk.subarray(0, room) : chunk);
        kept += Math.min(room, chunk.length);
        // Enough output: the rest of the body is never read.
        if (kept >= outputMax) settle(answer!());
      });
      res.on('end', () => settle(answer!()));
      res.on('error', () => settle(answer!()));
    });
    req.on('error', fail);
    req.end(body === '' ? undefined : body);
    return () => req.destroy();
  }, () => answer?.());
}

/** An HTTP check (CheckHTTP): 2xx passing, 429 warning, anything else or an error critical. */
export const httpProbe: Probe = async ({ definition: d, timeoutMs, outputMax }) => {
  const method = d.Method || 'GET';
  const target = d.HTTP!;
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    return critical(`parse ${JSON.stringify(target)}: invalid URL`);
  }
  const headers: OutgoingHttpHeaders = {};
  for (const [name, values] of Object.entries(d.Header ?? {})) headers[name.toLowerCase()] = values;
  headers['user-agent'] ??= USER_AGENT;
  headers.accept ??= ACCEPT;
  const deadline = Date.now() + timeoutMs;
  let current = method;
  let body = d.Body ?? '';
  for (let redirects = 0; ; redirects++) {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      return critical(`${goMethod(current)} ${JSON.stringify(url.href)}: unsupported protocol scheme ${JSON.stringify(url.protocol.slice(0, -1))}`);
    }
    let answer: HttpAnswer;
    try {
      answer = await exchange(url, current, headers, body, d, deadline - Date.now(), outputMax);
    } catch (err) {
      const address = `${url.hostname}:${url.port || (url.protocol === 'https:' ? 443 : 80)}`;
      const reason = err instanceof ProbeTimeout
        ? 'context deadline exceeded (Client.Timeout exceeded while awaiting headers)'
        : (err as NodeJS.ErrnoException).code ? goNetError('dial', 'tcp', address, err) : (err as Error).message;
      return critical(`${goMethod(current)} ${JSON.stringify(url.href)}: ${reason}`);
    }
    const redirect = [301, 302, 303, 307, 308].includes(answer.statusCode) && answer.location !== undefined;
    if (redirect && !d.DisableRedirects) {
      let next: URL;
      try {
        next = new URL(answer.location!, url);
      } catch {
        return critical(`${goMethod(current)} ${JSON.stringify(url.href)}: failed to parse Location header ${JSON.stringify(answer.location)}`);
      }
      if (redirects >= MAX_REDIRECTS) return critical(`${goMethod(current)} ${JSON.stringify(next.href)}: stopped after ${MAX_REDIRECTS} redirects`);
      if (next.host !== url.host) for (const name of SENSITIVE_HEADERS) delete headers[name];
      // 301, 302 and 303 turn into a GET without a body (HEAD stays HEAD); 307 and 308 repeat the request.
      if (answer.statusCode <= 303 && current !== 'HEAD') {
        current = 'GET';
        body = '';
      }
      url = next;
      continue;
    }
    const output = `HTTP ${method} ${target}: ${answer.status} Output: ${answer.body}`;
    if (answer.statusCode >= 200 && answer.statusCode <= 299) return passing(output);
    if (answer.statusCode === 429) return { status: 'warning', output };
    return critical(output);
  }
};

/** Connects a TCP (or TLS) socket within the deadline. */
function dial(host: string, port: number, ms: number, tls?: ReturnType<typeof tlsOptions>): Promise<Socket> {
  return withDeadline<Socket>(ms, (settle, fail) => {
    const socket = tls ? tlsConnect({ host, port, ...tls }) : netConnect({ host, port });
    socket.once(tls ? 'secureConnect' : 'connect', () => settle(socket));
    socket.once('error', fail);
    return () => {
      socket.removeAllListeners('error');
      socket.on('error', () => undefined);
    };
  });
}

/** A TCP check (CheckTCP): passing once a connection (with TCPUseTLS, a TLS handshake) succeeds. */
export const tcpProbe: Probe = async ({ definition: d, timeoutMs }) => {
  const address = d.TCP!;
  const kind = d.TCPUseTLS ? 'TCP+TLS' : 'TCP';
  const target = splitHostPort(address);
  if (!target) return critical(`dial tcp ${address}: address ${address}: missing port in address`);
  let socket: Socket | undefined;
  try {
    socket = await dial(target.host, target.port, timeoutMs, d.TCPUseTLS ? tlsOptions(d, target.host) : undefined);
    return passing(`${kind} connect ${address}: Success`);
  } catch (err) {
    return critical((err as NodeJS.ErrnoException).code || err instanceof ProbeTimeout
      ? goNetError('dial', 'tcp', address, err)
      : (err as Error).message);
  } finally {
    socket?.destroy();
  }
};

/**
 * A UDP check (CheckUDP): an empty datagram is sent; a reply, or silence until the timeout, is
 * passing; an error (an ICMP port unreachable on the connected socket) is critical.
 */
export const udpProbe: Probe = async ({ definition: d, timeoutMs }) => {
  const address = d.UDP!;
  const target = splitHostPort(address);
  if (!target) return critical(`dial udp ${address}: address ${address}: missing port in address`);
  const success = passing(`UDP connect ${address}: Success`);
  const socket = createSocket(isIPv6(target.host) ? 'udp6' : 'udp4');
  let local = '';
  try {
    return await withDeadline<ProbeResult>(timeoutMs, (settle, fail) => {
      socket.on('message', () => settle(success));
      socket.on('error', fail);
      socket.connect(target.port, target.host, () => {
        const mine = socket.address();
        local = `${mine.address}:${mine.port}`;
        socket.send(Buffer.alloc(0), (err) => err && fail(err));
      });
      return () => undefined;
    });
  } catch (err) {
    if (err instanceof ProbeTimeout) return success;
    const e = err as NodeJS.ErrnoException;
    return critical(local && e.code === 'ECONNREFUSED' ? `read udp ${local}->${address}: read: connection refused` : goNetError('dial', 'udp', address, err));
  } finally {
    socket.close();
  }
};

/** An HTTP/2 session to host:port, plaintext with prior knowledge or TLS, connected within the deadline. */
function h2session(address: string, useTls: boolean, d: CheckDefinition, ms: number): Promise<ClientHttp2Session> {
  const target = splitHostPort(address);
  const host = target?.host ?? address;
  const authority = `${useTls ? 'https' : 'http'}://${address}`;
  return withDeadline<ClientHttp2Session>(ms, (settle, fail) => {
    const session = h2connect(authority, useTls ? { ...tlsOptions(d, host), ALPNProtocols: ['h2'] } : {});
    session.once('connect', () => settle(session));
    session.once('error', fail);
    return () => {
      session.removeAllListeners('error');
      session.on('error', () => undefined);
    };
  });
}

/** gRPC status names, by code. */
const GRPC_CODES = [
  'OK', 'Canceled', 'Unknown', 'InvalidArgument', 'DeadlineExceeded', 'NotFound', 'AlreadyExists', 'PermissionDenied',
  'ResourceExhausted', 'FailedPrecondition', 'Aborted', 'OutOfRange', 'Unimplemented', 'Internal', 'Unavailable', 'DataLoss', 'Unauthenticated',
];
/** grpc.health.v1.HealthCheckResponse.ServingStatus names. */
const SERVING_STATUS = ['UNKNOWN', 'SERVING', 'NOT_SERVING', 'SERVICE_UNKNOWN'];

/** A HealthCheckRequest ({string service = 1}) in a gRPC message frame (uncompressed, 4-byte length). */
function healthRequestFrame(service: string): Buffer {
  const name = Buffer.from(service);
  const varint: number[] = [];
  for (let n = name.length; ; n = Math.floor(n / 0x80)) {
    if (n < 0x80) {
      varint.push(n);
      break;
    }
    varint.push((n % 0x80) + 0x80);
  }
  const message = name.length ? Buffer.concat([Buffer.from([0x0a, ...varint]), name]) : Buffer.alloc(0);
  const frame = Buffer.alloc(5);
  frame.writeUInt32BE(message.length, 1);
  return Buffer.concat([frame, message]);
}

/** The `status` (field 1, varint) of a HealthCheckResponse frame; 0 (UNKNOWN) when absent. */
function servingStatus(frame: Buffer): number {
  const message = frame.subarray(5, 5 + (frame.length >= 5 ? frame.readUInt32BE(1) : 0));
  for (let i = 0; i < message.length;) {
    const tag = message[i++];
    let value = 0;
    for (let shift = 0; i < message.length; shift += 7) {
      const byte = message[i++];
      value += (byte % 0x80) * 2 ** shift;
      if (byte < 0x80) break;
    }
    if (tag === 0x08) return value;
    if (tag % 8 === 2) i += value; // a length-delimited field of a newer version: skipped
  }
  return 0;
}

/**
 * A gRPC check (CheckGRPC): grpc.health.v1.Health/Check over HTTP/2 (TLS with GRPCUseTLS) for
 * "host:port[/service]"; passing when the answer is SERVING.
 */
export const grpcProbe: Probe = async ({ definition: d, timeoutMs }) => {
  const target = d.GRPC!;
  const slash = target.indexOf('/');
  const server = slash < 0 ? target : target.slice(0, slash);
  const service = slash < 0 ? '' : target.slice(slash + 1);
  const deadline = Date.now() + timeoutMs;
  const rpcError = (code: string, desc: string) => critical(`rpc error: code = ${code} desc = ${desc}`);
  let session: ClientHttp2Session;
  try {
    session = await h2session(server, d.GRPCUseTLS === true, d, timeoutMs);
  } catch (err) {
    if (err instanceof ProbeTimeout) return rpcError('DeadlineExceeded', 'context deadline exceeded');
    const reason = (err as NodeJS.ErrnoException).code?.startsWith('E') ? goNetError('dial', 'tcp', server, err) : (err as Error).message;
    return rpcError('Unavailable', `connection error: desc = "transport: Error while dialing: ${reason}"`);
  }
  try {
    const answer = await withDeadline<{ status: number; message: string; frame: Buffer }>(deadline - Date.now(), (settle, fail) => {
      const stream = session.request({
        [h2.HTTP2_HEADER_METHOD]: 'POST',
        [h2.HTTP2_HEADER_PATH]: '/grpc.health.v1.Health/Check',
        [h2.HTTP2_HEADER_CONTENT_TYPE]: 'application/grpc',
        [h2.HTTP2_HEADER_TE]: 'trailers',
        ['grpc-timeout']: `${Math.max(1, deadline - Date.now())}m`,
      });
      const chunks: Buffer[] = [];
      let size = 0;
      let status: string | undefined;
      let message = '';
      const take = (headers: Record<string, unknown>) => {
        if (headers['grpc-status'] !== undefined) status = String(headers['grpc-status']);
        if (headers['grpc-message'] !== undefined) message = decodeURIComponent(String(headers['grpc-message']));
      };
      stream.on('response', (headers) => {
        const httpStatus = Number(headers[h2.HTTP2_HEADER_STATUS]);
        if (httpStatus !== 200) fail(new Error(`unexpected HTTP status code received from server: ${httpStatus}`));
        take(headers);
      });
      stream.on('trailers', take);
      stream.on('data', (chunk: Buffer) => {
        // A HealthCheckResponse is a few bytes; a server sending more is cut off.
        if ((size += chunk.length) > 4096) return fail(new Error('received message larger than max'));
        chunks.push(chunk);
      });
      stream.on('end', () => settle({ status: Number(status ?? 2), message, frame: Buffer.concat(chunks) }));
      stream.on('error', fail);
      stream.end(healthRequestFrame(service));
      return () => stream.close();
    });
    if (answer.status !== 0) return rpcError(GRPC_CODES[answer.status] ?? `Code(${answer.status})`, answer.message);
    const serving = servingStatus(answer.frame);
    if (serving !== 1) return critical(`gRPC ${target} serving status: ${SERVING_STATUS[serving] ?? serving}`);
    return passing(`gRPC check ${target}: success`);
  } catch (err) {
    if (err instanceof ProbeTimeout) return rpcError('DeadlineExceeded', 'context deadline exceeded');
    return rpcError('Unavailable', (err as Error).message);
  } finally {
    session.destroy();
  }
};

/** An H2PING check (CheckH2PING): an HTTP/2 PING frame answered (TLS with H2PingUseTLS). */
export const h2pingProbe: Probe = async ({ definition: d, timeoutMs }) => {
  const target = d.H2PING!;
  const deadline = Date.now() + timeoutMs;
  let session: ClientHttp2Session;
  try {
    session = await h2session(target, d.H2PingUseTLS === true, d, timeoutMs);
  } catch (err) {
    const reason = err instanceof ProbeTimeout ? 'context deadline exceeded' : goNetError('dial', 'tcp', target, err);
    return critical(`Failed to dial to ${target}: ${reason}`);
  }
  try {
    await withDeadline<void>(deadline - Date.now(), (settle, fail) => {
      session.ping((err) => (err ? fail(err) : settle()));
      return () => undefined;
    });
    return passing('HTTP2 ping was successful');
  } catch (err) {
    return critical(`HTTP2 ping failed: ${err instanceof ProbeTimeout ? 'context deadline exceeded' : (err as Error).message}`);
  } finally {
    session.destroy();
  }
};

/** The probe of each check type the server runs (TTL checks expire in jobs.ts; alias checks in checker.ts). */
export const PROBES: Readonly<Record<string, Probe>> = {
  http: httpProbe,
  tcp: tcpProbe,
  udp: udpProbe,
  grpc: grpcProbe,
  h2ping: h2pingProbe,
};
