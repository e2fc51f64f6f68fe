/**
 * Redis command counts from `INFO commandstats`, read over a raw socket (a
 * client library would add its own handshake commands to the counts).
 */
import { connect } from 'node:net';

/** Command name (`get`, `client|setname`, …) → calls so far. */
export type CommandCounts = Map<string, number>;

/**
 * Commands left out of "commands per request": the harness's own `INFO`, the
 * gateway's pub/sub heartbeat `PING` and `SUBSCRIBE`, and connection set-up
 * (`CLIENT …`). None of them is work done for a proxied request.
 */
export const EXCLUDED_COMMANDS = ['info', 'ping', 'subscribe', 'client|*'];

function excluded(command: string): boolean {
  return EXCLUDED_COMMANDS.some((pattern) =>
    pattern.endsWith('*') ? command.startsWith(pattern.slice(0, -1)) : command === pattern,
  );
}

/** Reads the call count of every command the server has run. */
export async function readCommandCounts(port: number): Promise<CommandCounts> {
  const text = await request(port, 'INFO commandstats\r\n');
  const counts: CommandCounts = new Map();
  for (const line of text.split('\r\n')) {
    const match = /^cmdstat_([^:]+):calls=(\d+)/.exec(line);
    if (match !== null) counts.set(match[1] as string, Number(match[2]));
  }
  return counts;
}

/** Calls made between two snapshots, split into counted and excluded commands. */
export function commandsBetween(
  before: CommandCounts,
  after: CommandCounts,
): { counted: Map<string, number>; excluded: Map<string, number>; total: number } {
  const counted = new Map<string, number>();
  const left = new Map<string, number>();
  let total = 0;
  for (const [command, calls] of after) {
    const delta = calls - (before.get(command) ?? 0);
    if (delta <= 0) continue;
    if (excluded(command)) {
      left.set(command, delta);
    } else {
      counted.set(command, delta);
      total += delta;
    }
  }
  return { counted, excluded: left, total };
}

/** Sends one inline command and returns the bulk-string reply. */
function request(port: number, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    let reply = Buffer.alloc(0);
    socket.setTimeout(5000, () => {
      socket.destroy();
      reject(new Error('redis INFO: no answer within 5 s'));
    });
    socket.once('error', reject);
    socket.once('connect', () => socket.write(command));
    socket.on('data', (chunk: Buffer) => {
      reply = Buffer.concat([reply, chunk]);
      const headerEnd = reply.indexOf('\r\n');
      if (headerEnd < 0) return;
      const header = reply.subarray(0, headerEnd).toString();
      if (!header.startsWith('$')) {
        socket.destroy();
        reject(new Error(`redis INFO: unexpected reply ${header}`));
        return;
      }
      const length = Number(header.slice(1));
      if (reply.length < headerEnd + 2 + length) return;
      socket.destroy();
      resolve(reply.subarray(headerEnd + 2, headerEnd + 2 + length).toString());
    });
  });
}

/** The server's pid, from `INFO server`. */
export async function readRedisPid(port: number): Promise<number> {
  const match = /^process_id:(\d+)/m.exec(await request(port, 'INFO server\r\n'));
  if (match === null) throw new Error('redis INFO server: no process_id');
  return Number(match[1]);
}
