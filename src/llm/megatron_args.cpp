#include "llm/megatron_args.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <optional>

#include "llm/fp8_kernels.hpp"
#include "util/error.hpp"
#include "util/text.hpp"

namespace topsim {

namespace {

std::string n(long long value) { return std::to_string(value); }

bool is_name(const std::string& word) { return word.size() > 2 && word[0] == '-' && word[1] == '-'; }

// The arguments as given, read through Megatron's defaults (MegatronArgumentTable).
class Given {
 public:
  Given(const std::vector<std::string>& words, const MegatronArgumentTable& table) : table_(table) {
    std::size_t i = 0;
    // python or torchrun and their options, up to the first script
    for (std::size_t j = 0; j < words.size() && i == 0; ++j)
      if (words[j].size() > 3 && words[j].compare(words[j].size() - 3, 3, ".py") == 0) i = j + 1;
    while (i < words.size()) i = read_one(words, i);
  }

  const MegatronArgumentTable& table() const { return table_; }
  const std::vector<std::string>& not_modelled() const { return not_modelled_; }
  bool given(const std::string& name) const { return values_.count(name) != 0; }

  /// A flag's value: its default, inverted when given.
  bool flag(const std::string& name) const {
    const MegatronArgument& a = table_.argument(name);
    const bool standard = a.default_value == std::string("true");
    return given(name) ? !standard : standard;
  }
  /// The value given, else Megatron's default; nullopt where that is None.
  std::optional<std::string> text(const std::string& name) const {
    auto it = values_.find(name);
    if (it != values_.end()) return it->second;
    return table_.argument(name).default_value;
  }
  std::optional<int> integer(const std::string& name) const {
    std::optional<std::string> value = text(name);
    if (!value) return std::nullopt;
    std::size_t used = 0;
    long long v = -1;
    try {
      v = std::stoll(*value, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != value->size() || used == 0 || v < 0 || v > (1LL << 30))
      throw UsageError(name + " '" + *value + "': expected a whole number from 0 to " + n(1LL << 30));
    return static_cast<int>(v);
  }
  /// A value topsim needs where Megatron's default is None.
  int need(const std::string& name, const std::string& why) const {
    std::optional<int> v = integer(name);
    if (!v) throw UsageError("missing " + name + ": " + why + " (Megatron's default is None: " + table_.argument(name).source + ")");
    if (*v < 1) throw UsageError(name + " " + n(*v) + ": expected 1 or more");
    return *v;
  }
  /// An integer that must be 1 or more when set.
  int positive(const std::string& name) const {
    std::optional<int> v = integer(name);
    if (v && *v < 1) throw UsageError(name + " " + n(*v) + ": expected 1 or more");
    return v.value_or(0);
  }
  /// A text value that must be one of `choices` when set.
  std::optional<std::string> choice(const std::string& name, const std::vector<std::string>& choices) const {
    std::optional<std::string> v = text(name);
    if (v && std::find(choices.begin(), choices.end(), *v) == choices.end())
      throw UsageError(name + " '" + *v + "': expected " + join(choices, ", "));
    return v;
  }

 private:
  std::size_t read_one(const std::vector<std::string>& words, std::size_t i) {
    const std::string& name = words[i];
    if (!is_name(name))
      throw UsageError("'" + name + "' where an argument (--name) was expected" +
                       (i == 0 ? std::string() : " (after " + words[i - 1] + ")"));
    std::size_t next = i + 1;
    auto accepted = table_.accepted.find(name);
    if (accepted != table_.accepted.end()) {
      if (accepted->second.kind == MegatronArgument::Kind::flag) {
        values_[name] = "";
      } else {
        if (next >= words.size() || is_name(words[next])) throw UsageError(name + " needs a value");
        values_[name] = words[next++];
      }
      if (next < words.size() && !is_name(words[next]))
        throw UsageError("'" + words[next] + "' after " + name + (accepted->second.kind == MegatronArgument::Kind::flag
                                                                       ? ", which takes no value"
                                                                       : " " + values_[name] + ", which takes one value"));
      return next;
    }
    auto refused = table_.refused.find(name);
    if (refused != table_.refused.end())
      throw UsageError(name + ": " + refused->second.reason + " (" + refused->second.source + ")");
    if (!std::binary_search(table_.known.begin(), table_.known.end(), name)) {
      std::string guess = closest_match(name, table_.known);
      throw UsageError("unknown Megatron argument '" + name + "'" + (guess.empty() ? "" : " (did you mean '" + guess + "'?)") +
                       "; models/megatron.json lists the " + n(static_cast<long long>(table_.known.size())) +
                       " that Megatron-LM's parser defines at " + table_.commit);
    }
    // Not modelled: its values, however many, run to the next name.
    while (next < words.size() && !is_name(words[next])) ++next;
    if (std::find(not_modelled_.begin(), not_modelled_.end(), name) == not_modelled_.end()) not_modelled_.push_back(name);
    return next;
  }

  const MegatronArgumentTable& table_;
  std::map<std::string, std::string> values_;
  std::vector<std::string> not_modelled_;
};

[[noreturn]] void refuse(const MegatronArgumentTable& table, const std::string& key, const std::string& detail) {
  const MegatronRejection& r = table.rejection(key);
  throw UsageError(detail + ": Megatron-LM rejects this: " + r.reason + " (" + r.source + ")");
}

// --moe-layer-freq's list expression: expr := term ('+' term)*; term := atom ('*' N)*;
// atom := '[' N (',' N)* ']' | '(' expr ')'.
class PatternParser {
 public:
  explicit PatternParser(const std::string& text) : text_(text) {}
  std::vector<int> parse() {
    std::vector<int> out = expr();
    skip();
    if (at_ < text_.size()) bad();
    return out;
  }

 private:
  [[noreturn]] void bad() const {
    throw UsageError("--moe-layer-freq '" + text_ + "': topsim reads an integer N or a list expression of [0 or 1, ...], '+', "
                     "'* N' and parentheses, such as ([0]*3+[1]*58)");
  }
  void skip() {
    while (at_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[at_]))) ++at_;
  }
  bool take(char c) {
    skip();
    if (at_ < text_.size() && text_[at_] == c) return ++at_, true;
    return false;
  }
  int number() {
    skip();
    std::size_t start = at_;
    while (at_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[at_]))) ++at_;
    if (at_ == start || at_ - start > 6) bad();
    return std::stoi(text_.substr(start, at_ - start));
  }
  std::vector<int> atom() {
    std::vector<int> out;
    if (take('(')) {
      out = expr();
      if (!take(')')) bad();
    } else if (take('[')) {
      do {
        int v = number();
        if (v > 1) bad();
        out.push_back(v);
      } while (take(','));
      if (!take(']')) bad();
    } else {
      bad();
    }
    return out;
  }
  std::vector<int> term() {
    std::vector<int> out = atom();
    while (take('*')) {
      const int times = number();
      std::vector<int> once = out;
      out.clear();
      for (int i = 0; i < times && out.size() <= (1u << 16); ++i) out.insert(out.end(), once.begin(), once.end());
    }
    return out;
  }
  std::vector<int> expr() {
    std::vector<int> out = term();
    while (take('+')) {
      std::vector<int> more = term();
      out.insert(out.end(), more.begin(), more.end());
    }
    return out;
  }

  std::string text_;
  std::size_t at_ = 0;
};

// The MoE part of the model (MoeSpec) when --num-experts is set and not 0.
void read_moe(const Given& g, TransformerSpec& m) {
  const int experts = g.integer("--num-experts").value_or(0);
  if (experts == 0) return;  // Megatron: 0 means None (arguments.py:1648-1649)
  MoeSpec moe;
  moe.experts = experts;
  moe.top_k = g.need("--moe-router-topk", "experts each token visits");
  if (moe.top_k > experts) throw UsageError("--moe-router-topk " + n(moe.top_k) + " is more than --num-experts " + n(experts));
  moe.expert_ffn_hidden = g.given("--moe-ffn-hidden-size") ? g.positive("--moe-ffn-hidden-size") : m.ffn_hidden;
  if (const int shared = g.positive("--moe-shared-expert-intermediate-size")) {
    if (shared % moe.expert_ffn_hidden != 0)
      throw UsageError("--moe-shared-expert-intermediate-size " + n(shared) + " is not a whole number of experts of " +
                       "--moe-ffn-hidden-size " + n(moe.expert_ffn_hidden) + ": topsim models shared experts as experts of that size");
    moe.shared_experts = shared / moe.expert_ffn_hidden;
  }
  const std::vector<int> pattern = moe_layer_pattern(g.text("--moe-layer-freq").value_or(""), m.layers);
  if (static_cast<int>(pattern.size()) != m.layers)
    refuse(g.table(), "moe_layer_freq_length",
           "--moe-layer-freq gives " + n(static_cast<long long>(pattern.size())) + " layers, not --num-layers " + n(m.layers));
  for (int v : pattern) moe.moe_layer.push_back(v == 1);
  if (std::none_of(moe.moe_layer.begin(), moe.moe_layer.end(), [](bool b) { return b; }))
    throw UsageError("--moe-layer-freq makes no layer MoE: give --num-experts only to a model with MoE layers");
  m.moe = moe;
}

// The transformer by shape; `tp` pads the vocabulary as Megatron does.
TransformerSpec read_model(const Given& g, int tp, const std::string& name, std::vector<std::string>& notes) {
  TransformerSpec m;
  m.name = name;
  m.description = "a transformer read from Megatron-LM arguments";
  m.source = "--megatron-args";
  m.layers = g.need("--num-layers", "the transformer's layers");
  m.hidden = g.need("--hidden-size", "the transformer's hidden size");
  m.heads = g.need("--num-attention-heads", "the attention heads");
  m.seq_len = g.need("--seq-length", "the tokens per sequence");
  const std::optional<int> positions = g.integer("--max-position-embeddings");
  if (!positions) refuse(g.table(), "required_arguments", "missing --max-position-embeddings");
  if (*positions < m.seq_len)
    refuse(g.table(), "max_position_embeddings_covers_sequence",
           "--max-position-embeddings " + n(*positions) + " with --seq-length " + n(m.seq_len));
  if (g.given("--kv-channels")) {
    m.head_dim = g.positive("--kv-channels");
  } else {
    if (m.hidden % m.heads != 0)
      refuse(g.table(), "kv_channels_divide", "--hidden-size " + n(m.hidden) + " over --num-attention-heads " + n(m.heads));
    m.head_dim = m.hidden / m.heads;
  }
  m.kv_heads = g.flag("--group-query-attention") ? g.positive("--num-query-groups") : m.heads;
  if (m.kv_heads < 1 || m.heads % m.kv_heads != 0)
    throw UsageError("--num-attention-heads " + n(m.heads) + " is not a multiple of --num-query-groups " + n(m.kv_heads));
  m.ffn = g.flag("--swiglu") ? TransformerSpec::Ffn::swiglu : TransformerSpec::Ffn::gelu;
  if (g.given("--ffn-hidden-size")) {
    m.ffn_hidden = g.positive("--ffn-hidden-size");
  } else if (m.ffn == TransformerSpec::Ffn::swiglu) {
    // Megatron's rule when unset (arguments.py:1320-1329): 2/3 of 4h, down to a multiple of 64.
    m.ffn_hidden = static_cast<int>(4.0 * m.hidden * 2 / 3 / 64) * 64;
  } else {
    m.ffn_hidden = 4 * m.hidden;
  }
  const int vocab = g.need("--vocab-size", "topsim cannot read a tokenizer, so give the vocabulary's size");
  // Padded to a multiple of --make-vocab-size-divisible-by x tp (megatron/training/vocab_utils.py:58-59).
  const long long multiple = static_cast<long long>(g.need("--make-vocab-size-divisible-by", "the vocabulary's padding")) * tp;
  m.vocab = static_cast<int>((vocab + multiple - 1) / multiple * multiple);
  if (m.vocab != vocab)
    notes.push_back("vocabulary " + n(vocab) + " padded to " + n(m.vocab) + " (a multiple of --make-vocab-size-divisible-by x tp = " +
                    n(multiple) + "), as Megatron-LM pads it");
  m.tied_embeddings = !g.flag("--untie-embeddings-and-output-weights");
  read_moe(g, m);
  return m;
}

// --decoder-first/last-pipeline-num-layers as Megatron-Core checks them (transformer_config.py:2229-2353).
void check_uneven(const MegatronArgumentTable& t, int layers, const LlmLayout& L) {
  if (L.account_for_embedding || L.account_for_loss)
    refuse(t, "uneven_with_accounting", "--decoder-first/last-pipeline-num-layers with --account-for-*-in-pipeline-split");
  const int middle_layers = layers - L.first_stage_layers - L.last_stage_layers;
  const int middle_stages = L.pp - (L.first_stage_layers != 0 ? 1 : 0) - (L.last_stage_layers != 0 ? 1 : 0);
  const std::string given = n(layers) + " layers less " + n(L.first_stage_layers + L.last_stage_layers) + " on the first and last stages leave " +
                            n(middle_layers);
  if (middle_layers < 0 || (middle_layers == 0) != (middle_stages == 0))
    refuse(t, "uneven_middle_stages", given + " for " + n(middle_stages) + " middle stages");
  if (middle_stages > 0 && middle_layers % middle_stages != 0)
    refuse(t, "uneven_middle_divisible", given + " over " + n(middle_stages) + " middle stages");
}

// vp and the uneven split (arguments.py:928-1008).
void read_pipeline(const Given& g, int layers, LlmLayout& L) {
  const MegatronArgumentTable& t = g.table();
  const int per_virtual = g.positive("--num-layers-per-virtual-pipeline-stage");
  const int virtual_stages = g.positive("--num-virtual-stages-per-pipeline-rank");
  L.first_stage_layers = g.positive("--decoder-first-pipeline-num-layers");
  L.last_stage_layers = g.positive("--decoder-last-pipeline-num-layers");
  L.account_for_embedding = g.flag("--account-for-embedding-in-pipeline-split");
  L.account_for_loss = g.flag("--account-for-loss-in-pipeline-split");
  const bool first_last = L.first_stage_layers != 0 || L.last_stage_layers != 0;
  const int slots = layers + (L.account_for_embedding ? 1 : 0) + (L.account_for_loss ? 1 : 0);
  const std::string slots_text = n(slots) + (slots == layers ? " layers" : " layers and accounted slots");
  if (per_virtual != 0 && virtual_stages != 0)
    refuse(t, "one_virtual_pipeline_setting", "--num-layers-per-virtual-pipeline-stage with --num-virtual-stages-per-pipeline-rank");
  if (per_virtual != 0) {
    if (first_last)
      refuse(t, "uneven_needs_virtual_stages_per_rank", "--num-layers-per-virtual-pipeline-stage with --decoder-first/last-pipeline-num-layers");
    if (slots % L.pp != 0) refuse(t, "layers_divisible_by_pipeline", slots_text + " over pipeline size " + n(L.pp));
    if (slots / L.pp % per_virtual != 0)
      refuse(t, "layers_per_stage_divisible_by_virtual", n(slots / L.pp) + " layers per stage over " + n(per_virtual) + " per virtual stage");
    L.vp = slots / L.pp / per_virtual;
  } else if (virtual_stages != 0) {
    L.vp = virtual_stages;
  } else if (!first_last && slots % L.pp != 0) {
    refuse(t, "layers_divisible_by_pipeline", slots_text + " over pipeline size " + n(L.pp));
  }
  if (first_last) check_uneven(t, layers, L);
  if (L.vp > 1) {
    const bool p2p_overlap = g.flag("--no-overlap-p2p-communication");
    if (L.pp <= (p2p_overlap ? 1 : 2))
      refuse(t, "interleaved_needs_pipeline", n(L.vp) + " virtual stages on pipeline size " + n(L.pp));
    if (first_last)
      throw UsageError("--decoder-first/last-pipeline-num-layers with virtual stages: topsim puts those layers on the first "
                       "and last virtual stage, Megatron spreads them over the first and last rank's virtual stages; not modelled");
  } else {
    L.align_param_gather = false;  // Megatron turns it off without interleaving (arguments.py:1009-1013)
  }
}

// Precision and the gradient reduce's type (arguments.py:1194-1217).
void read_precision(const Given& g, LlmLayout& L) {
  const bool bf16 = g.flag("--bf16"), fp16 = g.flag("--fp16");
  if (bf16 && fp16) refuse(g.table(), "bf16_and_fp16", "--bf16 with --fp16");
  if (!bf16 && !fp16)
    throw UsageError("neither --bf16 nor --fp16: Megatron-LM would train in fp32, which topsim does not model (give --bf16)");
  L.precision = bf16 ? "bf16" : "fp16";
  if (g.choice("--fp8-format", {"e4m3", "hybrid"})) {
    if (!bf16) throw UsageError("--fp8-format with --fp16: topsim models fp8 GEMMs with bf16 elsewhere (give --bf16)");
    L.precision = "fp8";
  }
  if (g.text("--fp8-recipe") == std::string("custom"))
    throw UsageError("--fp8-recipe custom: a quantization recipe of the user's own, which topsim does not model (it models " +
                     join(fp8_recipes(), ", ") + ")");
  L.fp8_recipe = g.choice("--fp8-recipe", fp8_recipes()).value_or(L.fp8_recipe);
  // The reduce's type follows from these as in Megatron (llm_types(): fp32 under bf16 unless
  // --grad-reduce-in-bf16, arguments.py:1204-1217); bf16 main gradients leave it bf16 there too.
  L.grad_reduce_in_fp32 = g.flag("--accumulate-allreduce-grads-in-fp32");
  const std::string main_grads = g.choice("--main-grads-dtype", {"fp32", "bf16"}).value_or("");
  if (bf16 && L.grad_reduce_in_fp32 && main_grads != "fp32")
    refuse(g.table(), "accumulate_needs_fp32_main_grads", "--accumulate-allreduce-grads-in-fp32 with --main-grads-dtype " + main_grads);
  L.grad_reduce_in_bf16 = bf16 && (g.flag("--grad-reduce-in-bf16") || main_grads == "bf16");
  if (L.grad_reduce_in_bf16) L.grad_reduce_in_fp32 = false;  // --grad-reduce-in-bf16 wins (arguments.py:1213-1214)
}

// Activation recomputation: topsim's none, selective or full (every layer).
void read_recompute(const Given& g, int layers_per_stage, LlmLayout& L) {
  const MegatronArgumentTable& t = g.table();
  // --recompute-activations sets selective granularity over any other (arguments.py:607-608)
  const std::optional<std::string> granularity =
      g.flag("--recompute-activations") ? std::optional<std::string>("selective") : g.choice("--recompute-granularity", {"full", "selective"});
  const std::optional<std::string> method = g.choice("--recompute-method", {"uniform", "block"});
  const std::optional<int> count = g.integer("--recompute-num-layers");
  if (!granularity) return;
  if (*granularity == "selective") {
    if (method) refuse(t, "selective_recompute_method", "--recompute-granularity selective with --recompute-method");
    if (count) refuse(t, "selective_recompute_num_layers", "--recompute-granularity selective with --recompute-num-layers");
    L.recompute = Recompute::selective;
    return;
  }
  if (!method) refuse(t, "full_recompute_needs_method", "--recompute-granularity full without --recompute-method");
  if (!count) refuse(t, "full_recompute_needs_num_layers", "--recompute-granularity full without --recompute-num-layers");
  const bool every_layer = (*method == "uniform" && *count == 1) || (*method == "block" && *count >= layers_per_stage);
  if (!every_layer)
    throw UsageError("--recompute-method " + *method + " --recompute-num-layers " + n(*count) +
                     " recomputes part of the layers; topsim models full recomputation of every layer (uniform 1, or block " +
                     n(layers_per_stage) + ") or none");
  L.recompute = Recompute::full;
}

// Parallel sizes, sequence parallelism, the optimizer and the overlap switches.
void read_parallel(const Given& g, const TransformerSpec& m, int gpus, LlmLayout& L) {
  const MegatronArgumentTable& t = g.table();
  L.pp = g.need("--pipeline-model-parallel-size", "the pipeline size");
  L.cp = g.need("--context-parallel-size", "the context-parallel size");
  L.ep = g.need("--expert-model-parallel-size", "the expert-parallel size");
  L.etp = g.positive("--expert-tensor-parallel-size");
  L.seq_len = m.seq_len;
  if (L.cp > 1 && m.seq_len % (2 * L.cp) != 0)
    refuse(t, "seq_length_context_parallel", "--seq-length " + n(m.seq_len) + " with --context-parallel-size " + n(L.cp));
  L.sp = g.flag("--sequence-parallel") && L.tp > 1;  // off without tensor parallelism (arguments.py:1432-1439)
  L.tp_comm_overlap = g.flag("--tp-comm-overlap");
  L.overlap_moe_ep_comm = g.flag("--overlap-moe-expert-parallel-comm");
  if (L.tp_comm_overlap && !L.sp) refuse(t, "tp_comm_overlap_needs_sequence_parallel", "--tp-comm-overlap without sequence parallelism");
  L.zero = g.flag("--use-distributed-optimizer") ? 1 : 0;
  L.overlap_grad_reduce = g.flag("--overlap-grad-reduce");
  L.overlap_param_gather = g.flag("--overlap-param-gather");
  if (L.overlap_param_gather && L.zero == 0)
    refuse(t, "overlap_param_gather_needs_distributed_optimizer", "--overlap-param-gather without --use-distributed-optimizer");
  if (L.overlap_param_gather && !L.overlap_grad_reduce)
    refuse(t, "overlap_param_gather_needs_overlap_grad_reduce", "--overlap-param-gather without --overlap-grad-reduce");
  L.align_param_gather = g.flag("--no-align-param-gather");
  L.ddp_bucket_params = g.positive("--ddp-bucket-size");
  if (L.ep > 1 && !m.moe) refuse(t, "expert_parallel_needs_experts", "--expert-model-parallel-size " + n(L.ep) + " without --num-experts");
  if (L.ep > 1 && m.moe->experts % L.ep != 0)
    refuse(t, "experts_divisible_by_expert_parallel", "--num-experts " + n(m.moe->experts) + " over --expert-model-parallel-size " + n(L.ep));
  const int model_parallel = L.tp * L.pp * L.cp;
  if (gpus % model_parallel != 0)
    refuse(t, "world_size_divisible", n(gpus) + " GPUs over tp x pp x cp = " + n(L.tp) + " x " + n(L.pp) + " x " + n(L.cp));
  const int dp = gpus / model_parallel;
  L.micro_batch = g.need("--micro-batch-size", "the sequences per micro-batch");
  L.global_batch = g.given("--global-batch-size") ? g.positive("--global-batch-size") : L.micro_batch * dp;
  if (L.global_batch % (L.micro_batch * dp) != 0)
    refuse(t, "global_batch_divisible", "--global-batch-size " + n(L.global_batch) + " over --micro-batch-size " + n(L.micro_batch) +
                                            " x data-parallel size " + n(dp));
}

}  // namespace

std::vector<std::string> split_megatron_words(const std::string& text) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  std::size_t i = 0;
  auto end_word = [&] {
    if (!in_word) return;
    const std::size_t eq = word.find('=');
    if (is_name(word) && eq != std::string::npos) {  // --name=value
      words.push_back(word.substr(0, eq));
      words.push_back(word.substr(eq + 1));
    } else {
      words.push_back(word);
    }
    word.clear();
    in_word = false;
  };
  while (i < text.size()) {
    const char c = text[i];
    if (c == '\\' && i + 1 < text.size()) {
      if (text[i + 1] == '\n') end_word();  // continuation: a separator
      else word += text[i + 1], in_word = true;
      i += 2;
    } else if (std::isspace(static_cast<unsigned char>(c))) {
      end_word();
      ++i;
    } else if (c == '#' && !in_word) {
      while (i < text.size() && text[i] != '\n') ++i;
    } else if (c == '\'' || c == '"') {
      // a backslash escapes the next character inside double quotes, not inside single ones
      std::size_t k = i + 1;
      for (; k < text.size() && text[k] != c; ++k) {
        if (c == '"' && text[k] == '\\' && k + 1 < text.size()) ++k;
        word += text[k];
      }
      if (k >= text.size()) throw UsageError(std::string("unclosed ") + c + " quote");
      in_word = true;
      i = k + 1;
    } else {
      word += c;
      in_word = true;
      ++i;
    }
  }
  end_word();
  return words;
}

std::vector<int> moe_layer_pattern(const std::string& text, int layers) {
  if (text.find('[') == std::string::npos) {
    std::size_t used = 0;
    int every = 0;
    try {
      every = std::stoi(text, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != text.size() || every < 1) PatternParser(text).parse();  // throws its message
    std::vector<int> out;
    for (int i = 0; i < layers; ++i) out.push_back(i % every == 0 ? 1 : 0);
    return out;
  }
  return PatternParser(text).parse();
}

MegatronRun read_megatron_run(const std::vector<std::string>& words, const MegatronArgumentTable& table, int gpus,
                              const std::string& name) {
  if (table.empty()) throw UsageError("the models folder has no megatron_arguments (models/megatron.json)");
  Given g(words, table);
  MegatronRun run;
  LlmLayout& L = run.layout;
  L.tp = g.need("--tensor-model-parallel-size", "the tensor-parallel size");
  run.model = read_model(g, L.tp, name, run.notes);
  read_parallel(g, run.model, gpus, L);
  read_pipeline(g, run.model.layers, L);
  read_precision(g, L);
  read_recompute(g, run.model.layers / (L.pp * L.vp), L);
  run.not_modelled = g.not_modelled();
  return run;
}

}  // namespace topsim
