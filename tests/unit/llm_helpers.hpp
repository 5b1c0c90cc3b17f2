#pragma once
// A dense decoder built by hand for the LLM tests, so that every expected number follows from
// the numbers given: head_dim = hidden / heads, GELU, untied, trained at 16 tokens.
#include <string>

#include "llm/pipeline.hpp"
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

/// Every virtual stage's forward and backward taking the same time.
inline PipelineInput uniform_pipeline(int pp, int vp, int m, double forward_s, double backward_s, double p2p_s) {
  PipelineInput in;
  in.pp = pp;
  in.vp = vp;
  in.micro_batches = m;
  in.forward_s.assign(static_cast<std::size_t>(pp * vp), forward_s);
  in.backward_s.assign(static_cast<std::size_t>(pp * vp), backward_s);
  in.p2p_s = p2p_s;
  return in;
}

}  // namespace topsim::test
