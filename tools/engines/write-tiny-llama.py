"""Writes a tiny Llama model with random weights as GGUF, for tests and the benchmark.

Its text is noise, but llama-server runs it like any model: real slots, KV cache, queue, timings
and metrics. Runs inside the engine root (Debian's python3-gguf). Same arguments, same file.
"""

import argparse

import gguf
import numpy as np

parser = argparse.ArgumentParser()
parser.add_argument("path")
parser.add_argument("--embd", type=int, default=512)
parser.add_argument("--layers", type=int, default=8)
parser.add_argument("--heads", type=int, default=8)
parser.add_argument("--context", type=int, default=8192)
parser.add_argument("--seed", type=int, default=42)
args = parser.parse_args()

n_embd, n_head = args.embd, args.heads
n_ff = n_embd * 8 // 3 // 32 * 32
rng = np.random.default_rng(args.seed)

# A SentencePiece-style vocabulary: the three specials, the 256 byte pieces, then word pieces.
words = "the of and to in is that for it as with was on be by at this are from or an not have".split()
letters = [chr(c) for c in range(ord("a"), ord("z") + 1)]
pieces = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)]
pieces += ["\u2581" + w for w in words + letters] + letters
types = [2, 3, 3] + [6] * 256 + [1] * (len(pieces) - 259)
scores = [0.0] * 259 + [-float(i) for i in range(len(pieces) - 259)]
n_vocab = len(pieces)

writer = gguf.GGUFWriter(args.path, "llama")
writer.add_name("sluice-tiny-llama")
writer.add_context_length(args.context)
writer.add_embedding_length(n_embd)
writer.add_feed_forward_length(n_ff)
writer.add_block_count(args.layers)
writer.add_head_count(n_head)
writer.add_head_count_kv(n_head)
writer.add_rope_dimension_count(n_embd // n_head)
writer.add_layer_norm_rms_eps(1e-5)
writer.add_vocab_size(n_vocab)
writer.add_file_type(0)
writer.add_tokenizer_model("llama")
writer.add_token_list(pieces)
writer.add_token_scores(scores)
writer.add_token_types(types)
writer.add_bos_token_id(1)
writer.add_eos_token_id(2)
writer.add_unk_token_id(0)


def weights(rows, cols):
    return (rng.standard_normal((rows, cols)) * 0.02).astype(np.float32)


writer.add_tensor("token_embd.weight", weights(n_vocab, n_embd))
writer.add_tensor("output_norm.weight", np.ones(n_embd, dtype=np.float32))
writer.add_tensor("output.weight", weights(n_vocab, n_embd))
for i in range(args.layers):
    writer.add_tensor(f"blk.{i}.attn_norm.weight", np.ones(n_embd, dtype=np.float32))
    for name in ("attn_q", "attn_k", "attn_v", "attn_output"):
        writer.add_tensor(f"blk.{i}.{name}.weight", weights(n_embd, n_embd))
    writer.add_tensor(f"blk.{i}.ffn_norm.weight", np.ones(n_embd, dtype=np.float32))
    writer.add_tensor(f"blk.{i}.ffn_gate.weight", weights(n_ff, n_embd))
    writer.add_tensor(f"blk.{i}.ffn_up.weight", weights(n_ff, n_embd))
    writer.add_tensor(f"blk.{i}.ffn_down.weight", weights(n_embd, n_ff))

writer.write_header_to_file()
writer.write_kv_data_to_file()
writer.write_tensors_to_file()
writer.close()
