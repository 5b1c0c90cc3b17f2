#pragma once
// A dense decoder built by hand for the LLM tests, so that every expected number follows from
// the numbers given: head_dim = hidden / heads, GELU, untied, trained at 16 tokens.
#include <string>

#include "model/llm_spec.hpp"

namespace topsim::test {

inline TransformerSpec make_model(int layers, int hidden, int heads, int kv_heads, int ffn, int vocab) {
  TransformerSpec m;
  m.name = "tiny";
  m.layers = layers;
  m.hidden = hidden;
  m.heads = heads;
  m.kv_heads = kv_heads;
  m.head_dim = hidden / heads;
  m.ffn_hidden = ffn;
  m.vocab = vocab;
  m.seq_len = 16;
  return m;
}

}  // namespace topsim::test
