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
// "pp x vp = 12 x 1 = 12"
std::string stages_text(const LlmLayout& L) { return "pp x vp = " + n(L.pp) + " x " + n(L.vp) + " = " + n(L.pp * L.vp); }

// What first + last would make `layers` divide over `middle` stages, each set stage keeping at
// least one layer (`set`: how many of first and last are given): up to three totals, the most
// even first, as "10 (6 layers per middle stage), 20 (5), 30 (4)"; "" when none.
std::string valid_first_last(int layers, int middle, int set) {
  if (middle <= 0) return layers >= set ? n(layers) + " (no middle stage)" : "";  // two stages: first and last
  std::vector<std::string> options;
  for (int per = layers / middle; per >= 1 && options.size() < 3; --per) {
    const int rest = layers - per * middle;
    if (rest < set) continue;
    options.push_back(n(rest) + (options.empty() ? " (" + n(per) + " layers per middle stage)" : " (" + n(per) + ")"));
  }
  return join(options, ", ");
}

// The split given by first_stage_layers / last_stage_layers (one or both set).
std::vector<int> explicit_split(const TransformerSpec& m, const LlmLayout& L) {
  const int stages = L.pp * L.vp;
  const int f = L.first_stage_layers, l = L.last_stage_layers;
  const int set = (f > 0 ? 1 : 0) + (l > 0 ? 1 : 0);
  const int middle = stages - set;
  const int rest = m.layers - f - l;
  const std::string given = f > 0 && l > 0 ? "--first-stage-layers " + n(f) + " + --last-stage-layers " + n(l) + " = " + n(f + l)
                            : f > 0      ? "--first-stage-layers " + n(f)
                                         : "--last-stage-layers " + n(l);
  require(rest >= 0, given + " exceed" + (set == 2 ? "" : "s") + " " + m.name + "'s " + n(m.layers) + " layers");
  if (middle == 0) {
    require(rest == 0, "with " + stages_text(L) + " stages, both first and last, --first-stage-layers + "
                       "--last-stage-layers must be " + m.name + "'s " + n(m.layers) + " layers, not " + n(f + l));
  } else {
    const std::string valid = valid_first_last(m.layers, middle, set);
    const std::string which = set == 2 ? "first + last" : f > 0 ? "first" : "last";
    require(rest >= middle && rest % middle == 0,
            m.name + "'s " + n(m.layers) + " layers less " + given + " leave " + n(rest) + ", not " +
                (rest < middle ? "enough for" : "divisible over") + " the " + n(middle) + " other stages of " +
                stages_text(L) + (valid.empty() ? "" : "; valid: " + which + " = " + valid));
  }
  std::vector<int> counts(static_cast<std::size_t>(stages), middle == 0 ? 0 : rest / middle);
  if (f > 0) counts.front() = f;
  if (l > 0) counts.back() = l;
  return counts;
}

// The split with the embedding and / or the loss counted as a layer's slot.
std::vector<int> accounted_split(const TransformerSpec& m, const LlmLayout& L) {
  const int stages = L.pp * L.vp;
  const int units = (L.account_for_embedding ? 1 : 0) + (L.account_for_loss ? 1 : 0);
  const int slots = m.layers + units;
  const std::string what = L.account_for_embedding && L.account_for_loss ? "2 (embedding, loss)"
                           : L.account_for_embedding                     ? "1 (embedding)"
                                                                         : "1 (loss)";
  if (slots % stages != 0) {
    // What would divide: the other count of units, none, or first and last stage layers.
    std::vector<std::string> valid;
    if (units == 1 && (m.layers + 2) % stages == 0) valid.push_back("both units (" + n(m.layers + 2) + " slots)");
    if (units == 2 && (m.layers + 1) % stages == 0) valid.push_back("one unit (" + n(m.layers + 1) + " slots)");
    if (m.layers % stages == 0) valid.push_back("no accounting (" + n(m.layers / stages) + " layers per stage)");
    const std::string first_last = valid_first_last(m.layers, stages - 2, 2);
    if (!first_last.empty())
      valid.push_back("instead of the accounting, --first-stage-layers + --last-stage-layers = " + first_last);
    throw UsageError(m.name + " has " + n(m.layers) + " layers + " + what + " = " + n(slots) +
                     " pipeline slots, not divisible by " + stages_text(L) +
                     (valid.empty() ? "" : "; valid: " + join(valid, "; or ")));
  }
  std::vector<int> counts(static_cast<std::size_t>(stages), slots / stages);
  if (L.account_for_embedding) --counts.front();
  if (L.account_for_loss) --counts.back();
  return counts;
}

}  // namespace

std::vector<int> virtual_stage_layer_counts(const TransformerSpec& m, const LlmLayout& L) {
  const int stages = L.pp * L.vp;
  const bool accounting = L.account_for_embedding || L.account_for_loss;
  const bool explicit_layers = L.first_stage_layers != 0 || L.last_stage_layers != 0;
  for (auto [value, flag] : {std::pair{L.first_stage_layers, "--first-stage-layers"}, {L.last_stage_layers, "--last-stage-layers"}})
    require(value >= 0, std::string(flag) + " must be >= 1 (or left out for the even share), got " + n(value));
  if (L.pp == 1 && (accounting || explicit_layers)) {
    const std::string flag = L.first_stage_layers != 0 ? "--first-stage-layers " + n(L.first_stage_layers)
                             : L.last_stage_layers != 0 ? "--last-stage-layers " + n(L.last_stage_layers)
                             : L.account_for_embedding  ? std::string("--account-for-embedding")
                                                        : std::string("--account-for-loss");
    throw UsageError(flag + " needs pipeline parallelism (--pp > 1): with one stage there is nothing to split");
  }
  require(!(accounting && explicit_layers),
          "--first-stage-layers / --last-stage-layers and --account-for-embedding / --account-for-loss are two ways to "
          "shape the first and last stages: give one of them");
  if (accounting) return accounted_split(m, L);
  if (explicit_layers) return explicit_split(m, L);
  require(m.layers % stages == 0, m.name + " has " + n(m.layers) + " layers, not divisible by " + stages_text(L));
  return std::vector<int>(static_cast<std::size_t>(stages), m.layers / stages);
}

std::vector<int> virtual_stage_layers(const TransformerSpec& m, const LlmLayout& L, int virtual_stage) {
  const std::vector<int> counts = virtual_stage_layer_counts(m, L);
  int first = 0;
  for (int v = 0; v < virtual_stage; ++v) first += counts[static_cast<std::size_t>(v)];
  std::vector<int> layers;
  for (int i = 0; i < counts[static_cast<std::size_t>(virtual_stage)]; ++i) layers.push_back(first + i);
  return layers;
}

std::vector<int> stage_layers(const TransformerSpec& m, const LlmLayout& L, int stage) {
  std::vector<int> layers;
  for (int c = 0; c < L.vp; ++c)
    for (int layer : virtual_stage_layers(m, L, c * L.pp + stage)) layers.push_back(layer);
  return layers;
}

std::string describe_layer_split(const TransformerSpec& m, const LlmLayout& L) {
  if (!L.uneven()) return "";
  const std::vector<int> counts = virtual_stage_layer_counts(m, L);
  std::vector<std::string> parts = {n(counts.front()) + (L.account_for_embedding ? "+emb" : "")};
  for (std::size_t i = 1; i + 1 < counts.size();) {  // the middle stages, run-length coded
    std::size_t j = i;
    while (j + 1 < counts.size() - 1 && counts[j + 1] == counts[i]) ++j;
    parts.push_back(n(counts[i]) + (j > i ? "x" + n(static_cast<int>(j - i + 1)) : ""));
    i = j + 1;
  }
  parts.push_back(n(counts.back()) + (L.account_for_loss ? "+loss" : ""));
  return join(parts, "/");
}

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
  virtual_stage_layer_counts(m, L);  // the layers split over pp x vp: UsageError unless they do
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
  require(L.precision == "fp8" || L.fp8_recipe == "delayed",
          "fp8 recipe '" + L.fp8_recipe + "' needs precision fp8 (the recipe scales fp8 GEMMs; precision is " +
              L.precision + ")");
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
