#include "llm/layout.hpp"

#include <algorithm>

#include "util/error.hpp"
#include "util/text.hpp"

namespace topsim {

namespace {
const char* name_of(Dim d) {
  switch (d) {
    case Dim::tp: return "tp";
    case Dim::cp: return "cp";
    case Dim::dp: return "dp";
    case Dim::pp: return "pp";
  }
  return "?";
}

std::string n(int value) { return std::to_string(value); }

void require(bool ok, const std::string& message) {
  if (!ok) throw UsageError(message);
}
}  // namespace

DimOrder parse_dim_order(const std::string& text) {
  std::vector<std::string> parts = split(text, '-');
  DimOrder order{};
  const std::string valid = "a permutation of tp, cp, dp, pp joined by '-', innermost first (Megatron's: tp-cp-dp-pp)";
  if (parts.size() != 4) throw UsageError("--order '" + text + "': expected " + valid);
  std::array<bool, 4> seen{};
  for (std::size_t i = 0; i < 4; ++i) {
    Dim d;
    if (parts[i] == "tp") d = Dim::tp;
    else if (parts[i] == "cp") d = Dim::cp;
    else if (parts[i] == "dp") d = Dim::dp;
    else if (parts[i] == "pp") d = Dim::pp;
    else throw UsageError("--order '" + text + "': unknown dimension '" + parts[i] + "'; expected " + valid);
    if (seen[static_cast<std::size_t>(d)]) throw UsageError("--order '" + text + "': " + parts[i] + " twice; expected " + valid);
    seen[static_cast<std::size_t>(d)] = true;
    order[i] = d;
  }
  return order;
}

std::string to_string(const DimOrder& order) {
  std::string out;
  for (Dim d : order) out += (out.empty() ? "" : "-") + std::string(name_of(d));
  return out;
}

LlmLayout resolve_layout(const TransformerSpec& m, LlmLayout L, int gpus) {
  for (auto [value, flag] : {std::pair{L.tp, "--tp"}, {L.pp, "--pp"}, {L.vp, "--vp"}, {L.cp, "--cp"}, {L.ep, "--ep"},
                             {L.micro_batch, "--micro-batch"}})
    require(value >= 1, std::string(flag) + " must be >= 1, got " + n(value));
  require(L.dp >= 0, "--dp must be >= 1, got " + n(L.dp));
  const int model_parallel = L.tp * L.pp * L.cp;
  if (L.dp == 0) {
    require(gpus % model_parallel == 0, n(gpus) + " GPUs do not divide into tp x pp x cp = " + n(L.tp) + " x " + n(L.pp) +
                                            " x " + n(L.cp) + " = " + n(model_parallel) + " (the rest is data parallel)");
    L.dp = gpus / model_parallel;
  }
  require(model_parallel * L.dp == gpus, "tp x pp x cp x dp = " + n(L.tp) + " x " + n(L.pp) + " x " + n(L.cp) + " x " +
                                             n(L.dp) + " = " + n(model_parallel * L.dp) + " is not the " + n(gpus) + " GPUs");
  if (L.seq_len == 0) L.seq_len = m.seq_len;
  if (L.tp == 1) L.sp = false;  // Megatron ignores sequence parallelism without tensor parallelism
  require(m.heads % L.tp == 0, m.name + " has " + n(m.heads) + " heads, not divisible by tp " + n(L.tp));
  require(m.kv_heads % L.tp == 0, m.name + " has " + n(m.kv_heads) + " KV heads (query groups), not divisible by tp " +
                                      n(L.tp) + " (Megatron splits whole groups)");
  require(m.ffn_hidden % L.tp == 0, m.name + "'s ffn_hidden " + n(m.ffn_hidden) + " is not divisible by tp " + n(L.tp));
  require(m.layers % (L.pp * L.vp) == 0, m.name + " has " + n(m.layers) + " layers, not divisible by pp x vp = " +
                                             n(L.pp) + " x " + n(L.vp) + " = " + n(L.pp * L.vp));
  require(L.vp == 1 || L.pp > 1, "--vp " + n(L.vp) + " needs pipeline parallelism (--pp > 1)");
  require(L.seq_len % L.cp == 0, "sequence " + n(L.seq_len) + " is not divisible by cp " + n(L.cp));
  require(!L.sp || (L.seq_len / L.cp) % L.tp == 0, "sequence parallelism splits the " + n(L.seq_len / L.cp) +
                                                         " tokens of a cp rank over tp " + n(L.tp) + ": not divisible");
  if (L.global_batch == 0) L.global_batch = L.micro_batch * L.dp;
  require(L.global_batch % (L.micro_batch * L.dp) == 0,
          "global batch " + n(L.global_batch) + " is not divisible by micro-batch x dp = " + n(L.micro_batch) + " x " +
              n(L.dp) + " = " + n(L.micro_batch * L.dp));
  const int micro_batches = L.micro_batches();
  require(L.vp == 1 || micro_batches % L.pp == 0,
          "the interleaved schedule (--vp " + n(L.vp) + ") needs micro-batches per replica (" + n(micro_batches) +
              " = global batch / (micro-batch x dp)) divisible by pp " + n(L.pp));
  if (L.ep > 1) {
    require(m.moe.has_value(), "--ep " + n(L.ep) + ": " + m.name + " has no experts (expert parallelism needs an MoE model)");
    require(m.moe->experts % L.ep == 0, m.name + " has " + n(m.moe->experts) + " experts, not divisible by ep " + n(L.ep));
    require(L.dp % L.ep == 0, "ep " + n(L.ep) + " is carved out of data parallelism: dp " + n(L.dp) + " is not divisible by it");
  }
  require(L.zero >= 0 && L.zero <= 3, "--zero must be 0, 1, 2 or 3, got " + n(L.zero));
  require(L.precision == "bf16" || L.precision == "fp16" || L.precision == "fp8",
          "--precision '" + L.precision + "': expected bf16, fp16 or fp8");
  return L;
}

Placement::Placement(const LlmLayout& layout, DimOrder order) : order_(order) {
  size_[static_cast<std::size_t>(Dim::tp)] = layout.tp;
  size_[static_cast<std::size_t>(Dim::cp)] = layout.cp;
  size_[static_cast<std::size_t>(Dim::dp)] = layout.dp;
  size_[static_cast<std::size_t>(Dim::pp)] = layout.pp;
}

int Placement::size(Dim d) const { return size_[static_cast<std::size_t>(d)]; }

int Placement::rank(const RankCoord& c) const {
  const std::array<int, 4> at = {c.tp, c.cp, c.dp, c.pp};
  int rank = 0;
  for (auto it = order_.rbegin(); it != order_.rend(); ++it) rank = rank * size(*it) + at[static_cast<std::size_t>(*it)];
  return rank;
}

RankCoord Placement::coord(int rank) const {
  std::array<int, 4> at{};
  for (Dim d : order_) {
    at[static_cast<std::size_t>(d)] = rank % size(d);
    rank /= size(d);
  }
  return {at[0], at[1], at[2], at[3]};
}

}  // namespace topsim
