/* eslint-disable no-bitwise -- DNS header flags and the rcode are bits of one 16-bit field (RFC 1035 4.1.1). */
import { createSocket, Socket as UdpSocket } from 'node:dgram';
import { once } from 'node:events';
import { connect, createServer, isIP, Server, Socket } from 'node:net';
import * as dnsPacket from 'dns-packet';
import type { DecodedPacket, Packet } from 'dns-packet';
import { answer, noData, questionOf, RCODE, refused, serverFailure } from './answer';
import type { DnsConfig } from './config';
import { DnsTokenNotFound, lookup } from './lookup';
import { routeQuestion } from './names';
import type { Engine } from '../../engine';
import type { Logger } from '../../logger';

/**
 * The catalog's DNS interface: one UDP socket and one TCP listener on the same address, answering
 * the public service's names from the catalog (names.ts, lookup.ts, answer.ts) and forwarding other
 * names to the recursors, if any.
 */
export class DnsServer {
  /** Listens on host:port (UDP first, then TCP on the port UDP got, so that port 0 gives one port for both). */
  static async start(engine: Engine, config: DnsConfig, address: { host: string; port: number }, logger: Logger): Promise<DnsServer> {
    const { udp, tcp, port } = await bindBoth(address);
    const server = new DnsServer(udp, tcp, address.host, port);
    const handler = new DnsHandler(engine, config, logger);
    udp.on('message', (msg, rinfo) => {
      handler.handle(msg, 'udp').then((out) => {
        if (out) udp.send(out, rinfo.port, rinfo.address);
      }, (err: unknown) => logger.warn({ err }, 'dns: a UDP question failed'));
    });
    udp.on('error', (err) => logger.warn({ err }, 'dns: UDP socket error'));
    tcp.on('connection', (socket) => server.serveConnection(socket, handler, logger));
    return server;
  }

  private readonly connections = new Set<Socket>();

  private constructor(
    private readonly udp: UdpSocket,
    private readonly tcp: Server,
    readonly host: string,
    readonly port: number,
  ) {}

  /** DNS over TCP: messages with a 2-byte length, any number per connection, which closes after 10 s idle. */
  private serveConnection(socket: Socket, handler: DnsHandler, logger: Logger): void {
    this.connections.add(socket);
    socket.once('close', () => this.connections.delete(socket));
    socket.setTimeout(10_000, () => socket.destroy());
    socket.on('error', () => socket.destroy());
    let buffered = Buffer.alloc(0);
    socket.on('data', (chunk) => {
      buffered = Buffer.concat([buffered, chunk]);
      while (buffered.length >= 2) {
        const length = buffered.readUInt16BE(0);
        if (buffered.length < 2 + length) break;
        const message = buffered.subarray(2, 2 + length);
        buffered = buffered.subarray(2 + length);
        handler.handle(message, 'tcp').then((out) => {
          if (!out || socket.destroyed) return;
          const framed = Buffer.alloc(2 + out.length);
          framed.writeUInt16BE(out.length, 0);
          out.copy(framed, 2);
          socket.write(framed);
        }, (err: unknown) => {
          logger.warn({ err }, 'dns: a TCP question failed');
          socket.destroy();
        });
      }
    });
  }

  /** Where it listens, as HOST:PORT. */
  get address(): string {
    return isIP(this.host) === 6 ? `[${this.host}]:${this.port}` : `${this.host}:${this.port}`;
  }

  async close(): Promise<void> {
    for (const socket of this.connections) socket.destroy();
    await Promise.all([
      new Promise<void>((done) => this.udp.close(() => done())),
      new Promise<void>((done) => this.tcp.close(() => done())),
    ]);
  }
}

/** Answers one DNS message (undefined: nothing to send back, the message was not DNS). */
class DnsHandler {
  private warnedToken = false;

  constructor(
    private readonly engine: Engine,
    private readonly config: DnsConfig,
    private readonly logger: Logger,
  ) {}

  async handle(message: Buffer, transport: 'udp' | 'tcp'): Promise<Buffer | undefined> {
    let request: DecodedPacket;
    try {
      request = dnsPacket.decode(message);
    } catch {
      return formatError(message);
    }
    if (request.type !== 'query') return undefined;
    const q = questionOf(request);
    if (!q) return encode(refused(request), request);
    const routed = routeQuestion(q.name, q.type, this.config.domain);
    if (!routed.inDomain) {
      if (this.config.recursors.length === 0) return encode(refused(request), request);
      return (await this.recurse(message, transport)) ?? encode(serverFailure(request, this.config), request);
    }
    if (q.type === 'AXFR' || q.type === 'IXFR') return encode(noData(request, this.config, RCODE.NOTIMP), request);
    try {
      const found = await lookup(this.engine, routed.query, this.config);
      const out = found ? answer(request, routed.query, found, this.config, transport) : noData(request, this.config, RCODE.NXDOMAIN);
      return encode(out, request);
    } catch (err) {
      if (!(err instanceof DnsTokenNotFound)) this.logger.warn({ err }, 'dns: lookup failed');
      else if (!this.warnedToken) this.logger.warn('dns: the DNS token (--dns-token) is not a token of the catalog: answers are SERVFAIL');
      this.warnedToken ||= err instanceof DnsTokenNotFound;
      return encode(serverFailure(request, this.config), request);
    }
  }

  /** The first recursor's answer, in order (the public service's "sequential" strategy); undefined when none answered. */
  private async recurse(message: Buffer, transport: 'udp' | 'tcp'): Promise<Buffer | undefined> {
    for (const recursor of this.config.recursors) {
      const at = recursor.lastIndexOf(':');
      const host = recursor.slice(0, at).replace(/^\[|\]$/g, '');
      const port = Number(recursor.slice(at + 1));
      try {
        return await (transport === 'tcp' ? tcpExchange : udpExchange)(host, port, message, this.config.recursorTimeoutMs);
      } catch (err) {
        this.logger.debug({ err, recursor }, 'dns: a recursor did not answer');
      }
    }
    return undefined;
  }
}

/** The encoded reply; a question whose type dns-packet cannot encode gets NOTIMP without it. */
function encode(packet: Packet, request: DecodedPacket): Buffer {
  try {
    return dnsPacket.encode(packet);
  } catch {
    return dnsPacket.encode({ ...refused(request), questions: [], flags: ((request.flags ?? 0) & dnsPacket.RECURSION_DESIRED) | RCODE.NOTIMP });
  }
}

/** FORMERR for a message with a header that does not decode further; nothing for one without a header. */
function formatError(message: Buffer): Buffer | undefined {
  if (message.length < 12 || (message[2] & 0x80) !== 0) return undefined;
  const header = Buffer.alloc(12);
  message.copy(header, 0, 0, 4);
  header[2] = 0x80 | (message[2] & 0x79); // QR, the opcode and RD of the query
  header[3] = 1; // FORMERR
  return header;
}

/** One question to a DNS server over UDP; the reply with the same id. */
export function udpExchange(host: string, port: number, message: Buffer, timeoutMs: number): Promise<Buffer> {
  const socket = createSocket(isIP(host) === 6 ? 'udp6' : 'udp4');
  return new Promise<Buffer>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer from ${host}:${port} within ${timeoutMs} ms`)), timeoutMs);
    socket.on('error', reject);
    socket.on('message', (reply) => {
      if (reply.length >= 2 && reply.readUInt16BE(0) === message.readUInt16BE(0)) {
        clearTimeout(timer);
        resolve(reply);
      }
    });
    socket.send(message, port, host);
  }).finally(() => socket.close());
}

/** One question to a DNS server over TCP (2-byte length framing). */
export function tcpExchange(host: string, port: number, message: Buffer, timeoutMs: number): Promise<Buffer> {
  const socket = connect({ host, port });
  return new Promise<Buffer>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer from ${host}:${port} within ${timeoutMs} ms`)), timeoutMs);
    let buffered = Buffer.alloc(0);
    socket.on('error', reject);
    socket.on('data', (chunk) => {
      buffered = Buffer.concat([buffered, chunk]);
      if (buffered.length >= 2 && buffered.length >= 2 + buffered.readUInt16BE(0)) {
        clearTimeout(timer);
        resolve(buffered.subarray(2, 2 + buffered.readUInt16BE(0)));
      }
    });
    const framed = Buffer.alloc(2 + message.length);
    framed.writeUInt16BE(message.length, 0);
    message.copy(framed, 2);
    socket.write(framed);
  }).finally(() => socket.destroy());
}

/** How often a port the system picked (port 0) for UDP is tried again when TCP finds it taken. */
const PICKED_PORT_TRIES = 10;

/**
 * The UDP socket and the TCP server on one port. With port 0 the system picks UDP's, which another
 * process may hold for TCP: then both are tried again on another picked port.
 */
async function bindBoth(address: { host: string; port: number }): Promise<{ udp: UdpSocket; tcp: Server; port: number }> {
  for (let attempt = 1; ; attempt++) {
    const udp = createSocket({ type: isIP(address.host) === 6 ? 'udp6' : 'udp4' });
    udp.bind(address.port, address.host);
    await Promise.race([once(udp, 'listening'), once(udp, 'error').then(([err]) => Promise.reject(err as Error))]);
    const port = udp.address().port;
    const tcp = createServer();
    try {
      tcp.listen(port, address.host);
      await Promise.race([once(tcp, 'listening'), once(tcp, 'error').then(([err]) => Promise.reject(err as Error))]);
      return { udp, tcp, port };
    } catch (err) {
      udp.close();
      const taken = (err as NodeJS.ErrnoException).code === 'EADDRINUSE';
      if (!(taken && address.port === 0 && attempt < PICKED_PORT_TRIES)) throw err;
    }
  }
}
