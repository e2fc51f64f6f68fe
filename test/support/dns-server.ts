/**
 * A small authoritative DNS server on loopback UDP for tests (RFC 1035 wire
 * format): it answers TXT queries from a table the test sets, NOERROR with no
 * answer (NODATA) for another type of a name in the table, and NXDOMAIN for
 * any other name. Point `sso.dnsServers` at `127.0.0.1:<port>`.
 */
import { createSocket, type RemoteInfo } from 'node:dgram';

export interface TestDnsServer {
  /** `127.0.0.1:<port>`, as `sso.dnsServers` takes it. */
  address: string;
  port: number;
  /** Sets the TXT records of `name` (each record's text; [] removes the name). */
  setTxt(name: string, records: readonly string[]): void;
  /** The names asked so far, lower-cased, in order. */
  readonly queries: readonly string[];
  stop(): Promise<void>;
}

const TYPE_TXT = 16;
const CLASS_IN = 1;
const RCODE_NXDOMAIN = 3;

export async function startDnsServer(): Promise<TestDnsServer> {
  const table = new Map<string, string[]>();
  const queries: string[] = [];
  const socket = createSocket('udp4');
  socket.on('message', (message: Buffer, from: RemoteInfo) => {
    const answer = answerOf(message, table, queries);
    if (answer !== undefined) socket.send(answer, from.port, from.address);
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(0, '127.0.0.1', () => resolve());
  });
  const { port } = socket.address();
  return {
    address: `127.0.0.1:${port}`,
    port,
    setTxt: (name, records) => {
      if (records.length === 0) table.delete(name.toLowerCase());
      else table.set(name.toLowerCase(), [...records]);
    },
    queries,
    stop: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}

/** The answer to one query; undefined for a datagram that is not one (dropped). */
function answerOf(
  query: Buffer,
  table: Map<string, string[]>,
  queries: string[],
): Buffer | undefined {
  if (query.length < 12 || query.readUInt16BE(4) !== 1) return undefined;
  const question = readName(query, 12);
  if (question === undefined || question.end + 4 > query.length) return undefined;
  const name = question.name.toLowerCase();
  queries.push(name);
  const type = query.readUInt16BE(question.end);
  const records = table.get(name);
  const answers = records !== undefined && type === TYPE_TXT ? records : [];
  const header = Buffer.alloc(12);
  header.writeUInt16BE(query.readUInt16BE(0), 0);
  // QR, the query's opcode and RD, AA, RA; the rcode.
  const flags = 0x8000 | (query.readUInt16BE(2) & 0x7900) | 0x0400 | 0x0080;
  header.writeUInt16BE(flags | (records === undefined ? RCODE_NXDOMAIN : 0), 2);
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(answers.length, 6);
  const questionBytes = query.subarray(12, question.end + 4);
  return Buffer.concat([header, questionBytes, ...answers.map(txtAnswer)]);
}

/** One TXT answer for the question's name (a pointer to offset 12), TTL 60. */
function txtAnswer(text: string): Buffer {
  const bytes = Buffer.from(text, 'utf8');
  const chunks: Buffer[] = [];
  // A character-string holds at most 255 bytes (RFC 1035 §3.3).
  for (let at = 0; at < bytes.length || at === 0; at += 255) {
    const piece = bytes.subarray(at, at + 255);
    chunks.push(Buffer.from([piece.length]), piece);
    if (bytes.length === 0) break;
  }
  const rdata = Buffer.concat(chunks);
  const fixed = Buffer.alloc(12);
  fixed.writeUInt16BE(0xc00c, 0);
  fixed.writeUInt16BE(TYPE_TXT, 2);
  fixed.writeUInt16BE(CLASS_IN, 4);
  fixed.writeUInt32BE(60, 6);
  fixed.writeUInt16BE(rdata.length, 10);
  return Buffer.concat([fixed, rdata]);
}

/** A name of uncompressed labels at `offset` (a question's), and where it ends. */
function readName(message: Buffer, offset: number): { name: string; end: number } | undefined {
  const labels: string[] = [];
  let at = offset;
  while (at < message.length) {
    const length = message[at] ?? 0;
    if (length === 0) return { name: labels.join('.'), end: at + 1 };
    if (length > 63 || at + 1 + length > message.length) return undefined;
    labels.push(message.toString('latin1', at + 1, at + 1 + length));
    at += 1 + length;
  }
  return undefined;
}
