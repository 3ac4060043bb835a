import { MAX_RANKS } from './engine-adapter';
import { count, record } from './engine-values';
import { UnparsableError } from '../unparsable.error';

/** One entry of llama-server's `GET /slots`, as far as the bridge reads it. */
export interface LlamacppSlot {
  readonly processing: boolean;
  /** The slot's context window in tokens (`n_ctx`); with a unified cache, the whole cache. */
  readonly nCtx: number | undefined;
  /**
   * Tokens the slot holds in the KV cache (`n_prompt_tokens`: its prompt and what it generated
   * so far; 0.7.0 counts a prompt in full from the moment the slot takes it). Absent on older
   * servers and on a slot that never had a task.
   */
  readonly tokens: number | undefined;
}

/**
 * `GET /slots` of every llama-server version the bridge knows: `is_processing` since b4027
 * (November 2024), `state` (0 idle, else processing) before it.
 */
export function readLlamacppSlots(raw: unknown): LlamacppSlot[] {
  if (!Array.isArray(raw) || raw.length > MAX_RANKS * 1024) {
    throw new UnparsableError('/slots is not a list of slots');
  }
  return raw.map((entry: unknown, i) => readSlot(record(entry, `/slots entry ${i}`), i));
}

function readSlot(slot: Record<string, unknown>, i: number): LlamacppSlot {
  return {
    processing: processing(slot, i),
    nCtx: positive(slot.n_ctx, `/slots entry ${i} n_ctx`),
    tokens: optional(slot.n_prompt_tokens, `/slots entry ${i} n_prompt_tokens`),
  };
}

function processing(slot: Record<string, unknown>, i: number): boolean {
  if (typeof slot.is_processing === 'boolean') return slot.is_processing;
  if (typeof slot.state === 'number') return count(slot.state, `/slots entry ${i} state`) !== 0;
  throw new UnparsableError(`/slots entry ${i} has neither is_processing nor state`);
}

function optional(v: unknown, what: string): number | undefined {
  return v === undefined || v === null ? undefined : count(v, what);
}

/** A context size: 0 (or absent) says nothing about the window. */
export function positive(v: unknown, what: string): number | undefined {
  const n = optional(v, what);
  return n === undefined || n === 0 ? undefined : n;
}
