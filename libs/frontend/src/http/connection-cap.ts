import { readFileSync } from 'node:fs';
import type { Server } from 'node:net';
import type { Counter } from 'prom-client';

/** Descriptors kept free under the file limit: worker connections, NATS, PostgreSQL, files. */
export const FILE_LIMIT_MARGIN = 256;
/** The cap when the file limit cannot be read (no /proc) or is unlimited. */
export const FALLBACK_MAX_CONNECTIONS = 10000;

/**
 * The soft limit on open files of this process (Node raises it to the hard limit at start), from
 * Linux's /proc/self/limits; null when unknown or unlimited.
 */
export function openFileLimit(limits?: string): number | null {
  let text = limits;
  if (text === undefined) {
    try {
      text = readFileSync('/proc/self/limits', 'utf8');
    } catch {
      return null;
    }
  }
  const soft = /^Max open files\s+(\S+)/m.exec(text)?.[1];
  const n = Number(soft);
  return Number.isSafeInteger(n) && n > 0 ? n : null;
}

/**
 * `--max-connections` left unset: the file limit minus a margin (a quarter of a small limit),
 * so that accepting clients can never use the descriptors the frontend needs itself.
 */
export function defaultMaxConnections(limit: number | null = openFileLimit()): number {
  if (limit === null) return FALLBACK_MAX_CONNECTIONS;
  return Math.max(1, limit - Math.min(FILE_LIMIT_MARGIN, Math.floor(limit / 4)));
}

/**
 * Node's own cap: past `max` open connections a new one is closed as soon as it is accepted
 * (its 'drop' event, counted here), while established connections keep being served.
 */
export function capConnections(server: Server, max: number, refused: Counter): void {
  server.maxConnections = max;
  server.on('drop', () => refused.inc());
}
