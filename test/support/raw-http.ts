import { connect } from 'node:net';

export interface RawAnswer {
  /** 0 when the server closed the connection without a status line. */
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * Sends bytes exactly as given over a fresh TCP connection (no client-side validation, unlike
 * fetch) and reads until the server closes it (requests carry `Connection: close`); for
 * requests a well-behaved client cannot send.
 */
export function rawRequest(port: number, bytes: Buffer, timeoutMs = 5000): Promise<RawAnswer> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const done = (): void => {
      clearTimeout(timer);
      resolve(parseAnswer(Buffer.concat(chunks)));
    };
    const timer = setTimeout(() => socket.destroy(), timeoutMs);
    socket.on('data', (d: Buffer) => chunks.push(d));
    // A server that answers early and closes may reset a connection we are still writing to.
    socket.on('error', () => undefined);
    socket.once('close', done);
    // Not end(): Node's HTTP server drops a pending answer when the client half-closes first.
    socket.write(bytes);
  });
}

function parseAnswer(raw: Buffer): RawAnswer {
  const text = raw.toString('latin1');
  const split = text.indexOf('\r\n\r\n');
  const head = split === -1 ? text : text.slice(0, split);
  const [statusLine, ...lines] = head.split('\r\n');
  const m = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine ?? '');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const i = line.indexOf(':');
    if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
  }
  return { status: m ? Number(m[1]) : 0, headers, body: split === -1 ? '' : text.slice(split + 4) };
}

/**
 * A request with `Connection: close`, a correct Content-Length and `Host: 127.0.0.1` unless one
 * is given; header values as latin1 bytes.
 */
export function httpBytes(
  method: string,
  path: string,
  headers: Array<[string, string | Buffer]>,
  body?: string | Buffer,
): Buffer {
  const payload = body === undefined ? undefined : Buffer.isBuffer(body) ? body : Buffer.from(body);
  const parts: Buffer[] = [Buffer.from(`${method} `, 'latin1'), Buffer.from(path, 'latin1')];
  const hasHost = headers.some(([name]) => name.toLowerCase() === 'host');
  parts.push(Buffer.from(' HTTP/1.1\r\nConnection: close\r\n', 'latin1'));
  if (!hasHost) parts.push(Buffer.from('Host: 127.0.0.1\r\n', 'latin1'));
  for (const [name, value] of headers) {
    parts.push(Buffer.from(`${name}: `, 'latin1'));
    parts.push(Buffer.isBuffer(value) ? value : Buffer.from(value, 'latin1'));
    parts.push(Buffer.from('\r\n', 'latin1'));
  }
  if (payload) parts.push(Buffer.from(`Content-Length: ${payload.length}\r\n`, 'latin1'));
  parts.push(Buffer.from('\r\n', 'latin1'));
  if (payload) parts.push(payload);
  return Buffer.concat(parts);
}
