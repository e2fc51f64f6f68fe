/**
 * A raw HTTP/2 client: frames written by hand on a socket, for what
 * `node:http2`'s client refuses to send (malformed fields, lying lengths,
 * floods). Header blocks are HPACK literals without indexing (RFC 7541
 * §6.2.2), never Huffman-coded, so any bytes can be sent; frames from the
 * server are parsed by their 9-byte header (RFC 9113 §4.1), payloads kept raw.
 */
import { connect, type Socket } from 'node:net';

export const FRAME = {
  DATA: 0x0,
  HEADERS: 0x1,
  RST_STREAM: 0x3,
  SETTINGS: 0x4,
  PING: 0x6,
  GOAWAY: 0x7,
  WINDOW_UPDATE: 0x8,
  CONTINUATION: 0x9,
} as const;
export const FLAG = { END_STREAM: 0x1, ACK: 0x1, END_HEADERS: 0x4 } as const;
/** RFC 9113 §7. */
export const ERROR = { NO_ERROR: 0, PROTOCOL_ERROR: 1, CANCEL: 8, ENHANCE_YOUR_CALM: 11 } as const;

const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

export interface Frame {
  type: number;
  flags: number;
  stream: number;
  payload: Buffer;
}

/** One frame's bytes. */
export function frame(
  type: number,
  flags: number,
  stream: number,
  payload: Buffer = Buffer.alloc(0),
): Buffer {
  const head = Buffer.alloc(9);
  head.writeUIntBE(payload.length, 0, 3);
  head.writeUInt8(type, 3);
  head.writeUInt8(flags, 4);
  head.writeUInt32BE(stream & 0x7fffffff, 5);
  return Buffer.concat([head, payload]);
}

/** An HPACK integer with an `prefix`-bit prefix (RFC 7541 §5.1), the first byte's high bits `high`. */
function hpackInteger(value: number, prefix: number, high: number): Buffer {
  const max = (1 << prefix) - 1;
  if (value < max) return Buffer.from([high | value]);
  const bytes = [high | max];
  let rest = value - max;
  while (rest >= 128) {
    bytes.push((rest % 128) + 128);
    rest = Math.floor(rest / 128);
  }
  bytes.push(rest);
  return Buffer.from(bytes);
}

/** A header block of literal fields without indexing, names and values as given (any bytes). */
export function headerBlock(fields: [string, string][]): Buffer {
  const parts: Buffer[] = [];
  for (const [name, value] of fields) {
    const n = Buffer.from(name, 'latin1');
    const v = Buffer.from(value, 'latin1');
    parts.push(
      Buffer.from([0x00]),
      hpackInteger(n.length, 7, 0),
      n,
      hpackInteger(v.length, 7, 0),
      v,
    );
  }
  return Buffer.concat(parts);
}

/** The request fields a valid GET carries, then `extra`. */
export function requestFields(
  authority: string,
  path: string,
  extra: [string, string][] = [],
  method = 'GET',
): [string, string][] {
  return [
    [':method', method],
    [':scheme', 'http'],
    [':authority', authority],
    [':path', path],
    ...extra,
  ];
}

export function rstStream(stream: number, code: number): Buffer {
  const payload = Buffer.alloc(4);
  payload.writeUInt32BE(code);
  return frame(FRAME.RST_STREAM, 0, stream, payload);
}

export interface RawHttp2 {
  socket: Socket;
  /** Every frame the server sent so far. */
  frames: Frame[];
  /** The socket closed. */
  closed: Promise<void>;
  isClosed(): boolean;
  write(...frames: Buffer[]): void;
  /** HEADERS (and END_STREAM when no body follows) on `stream`. */
  headers(stream: number, fields: [string, string][], endStream?: boolean): void;
  /** The first frame (from now on, or already received) that `match` accepts, within `ms`. */
  waitFor(match: (f: Frame) => boolean, ms?: number): Promise<Frame>;
  /** The GOAWAY's error code, when one arrived. */
  goawayCode(): number | undefined;
  close(): void;
}

/** Connects (cleartext, prior knowledge), sends the preface and an empty SETTINGS, and acknowledges the server's. */
export async function connectRawHttp2(port: number): Promise<RawHttp2> {
  const socket = connect(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  socket.on('error', () => {});
  const frames: Frame[] = [];
  const waiters = new Set<() => void>();
  let buffered: Buffer = Buffer.alloc(0);
  let isClosed = false;
  socket.on('data', (chunk: Buffer) => {
    buffered = Buffer.concat([buffered, chunk as Buffer]) as Buffer;
    while (buffered.length >= 9) {
      const length = buffered.readUIntBE(0, 3);
      if (buffered.length < 9 + length) break;
      const f: Frame = {
        type: buffered.readUInt8(3),
        flags: buffered.readUInt8(4),
        stream: buffered.readUInt32BE(5) & 0x7fffffff,
        payload: buffered.subarray(9, 9 + length),
      };
      buffered = buffered.subarray(9 + length);
      frames.push(f);
      if (f.type === FRAME.SETTINGS && (f.flags & FLAG.ACK) === 0 && !socket.destroyed)
        socket.write(frame(FRAME.SETTINGS, FLAG.ACK, 0));
    }
    for (const wake of waiters) wake();
  });
  const closed = new Promise<void>((resolve) =>
    socket.once('close', () => {
      isClosed = true;
      for (const wake of waiters) wake();
      resolve();
    }),
  );
  socket.write(Buffer.concat([PREFACE, frame(FRAME.SETTINGS, 0, 0)]));
  const raw: RawHttp2 = {
    socket,
    frames,
    closed,
    isClosed: () => isClosed,
    write: (...fs) => void (socket.destroyed ? undefined : socket.write(Buffer.concat(fs))),
    headers(stream, fields, endStream = true) {
      const flags = FLAG.END_HEADERS | (endStream ? FLAG.END_STREAM : 0);
      raw.write(frame(FRAME.HEADERS, flags, stream, headerBlock(fields)));
    },
    waitFor(match, ms = 5000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = frames.find(match);
          if (found !== undefined) {
            done();
            resolve(found);
          } else if (isClosed) {
            done();
            reject(new Error('the connection closed before the frame came'));
          }
        };
        const timer = setTimeout(() => {
          done();
          reject(new Error(`no such frame within ${ms} ms`));
        }, ms);
        const done = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
    goawayCode() {
      const goaway = frames.find((f) => f.type === FRAME.GOAWAY);
      return goaway === undefined ? undefined : goaway.payload.readUInt32BE(4);
    },
    close: () => void socket.destroy(),
  };
  return raw;
}

/** The frame ending `stream`: its RST_STREAM, or the HEADERS of its answer. */
export function answerTo(stream: number) {
  return (f: Frame) =>
    f.stream === stream && (f.type === FRAME.RST_STREAM || f.type === FRAME.HEADERS);
}

/** A RST_STREAM's error code. */
export function rstCode(f: Frame): number {
  return f.payload.readUInt32BE(0);
}
