import type { Server } from 'node:http';
import type { Socket } from 'node:net';

const LIST = Buffer.from('LIST ');
const MAX_REQUEST_LINE = 16 * 1024;

/**
 * Vault clients list with the verb `LIST`, which Node's HTTP parser rejects before any JavaScript
 * sees the request. This rewrites `LIST /v1/path?q HTTP/1.1` at the start of each request on a
 * connection into `GET /v1/path?q&list=true HTTP/1.1`, which Vault defines as the same request.
 * Only the request line is touched; a request starts a connection or follows a finished response
 * (clients do not pipeline). The parser reads the socket through `push` once its direct
 * consumption of the handle is switched off.
 */
export function acceptListVerb(server: Server): void {
  const atStart = new WeakMap<Socket, boolean>();
  server.prependListener('connection', (socket: Socket) => {
    const handle = (socket as unknown as { _handle?: { _consumed?: boolean } })._handle;
    if (handle) handle._consumed = true;
    atStart.set(socket, true);
    let pending: Buffer | undefined;
    const push = socket.push.bind(socket);
    socket.push = (chunk: Buffer | null, encoding?: BufferEncoding) => {
      if (chunk === null || !atStart.get(socket)) return push(chunk, encoding);
      const data = pending ? Buffer.concat([pending, chunk]) : chunk;
      pending = undefined;
      const head = data.subarray(0, LIST.length);
      if (!LIST.subarray(0, head.length).equals(head)) {
        atStart.set(socket, false);
        return push(data, encoding);
      }
      const end = data.indexOf('\r\n');
      if (head.length < LIST.length || end < 0) {
        if (data.length > MAX_REQUEST_LINE) {
          atStart.set(socket, false);
          return push(data, encoding);
        }
        pending = data;
        return true;
      }
      atStart.set(socket, false);
      const line = data.subarray(LIST.length, end).toString('latin1');
      const space = line.lastIndexOf(' ');
      const url = space < 0 ? line : line.slice(0, space);
      const rewritten = `GET ${url}${url.includes('?') ? '&' : '?'}list=true${space < 0 ? '' : line.slice(space)}`;
      return push(Buffer.concat([Buffer.from(rewritten, 'latin1'), data.subarray(end)]), encoding);
    };
  });
  server.on('request', (req, res) => res.on('finish', () => atStart.set(req.socket, true)));
}
