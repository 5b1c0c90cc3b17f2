#include "model/catalog.hpp"

#include <algorithm>
#include <regex>

#include "util/error.hpp"
#include "util/text.hpp"

namespace topsim {

const char* to_string(LinkKind kind) {
  switch (kind) {
    case LinkKind::nvlink: return "nvlink";
    case LinkKind::pcie: return "pcie";
    case LinkKind::socket: return "socket";
    case LinkKind::numa: return "numa";
    case LinkKind::network: return "network";
  }
  return "?";
}

namespace {

template <typename Model>
const Model& find(const std::map<std::string, Model>& models, const std::string& name, const SourceRef& where,
                  const char* what) {
  auto it = models.find(name);
  if (it != models.end()) return it->second;
  std::vector<std::string> known;
  for (const auto& entry : models) known.push_back(entry.first);
  throw InputError(where.file, where.pointer, unknown_name_message(what, name, known));
}

}  // namespace

void Catalog::claim_name(const std::string& name, const SourceRef& where) {
  auto [it, fresh] = names_.emplace(name, where);
  if (!fresh)
    throw InputError(where.file, where.pointer,
                     "duplicate model name '" + name + "' (first defined at " + it->second.file + ":" +
                         it->second.pointer + "); model names are unique across all models/ files");
}

template <typename Model>
void Catalog::insert(std::map<std::string, Model>& models, Model model) {
  claim_name(model.name, model.where);
  std::string name = model.name;
  models.emplace(std::move(name), std::move(model));
}

void Catalog::add(LinkModel model) { insert(links_, std::move(model)); }
void Catalog::add(GpuModel model) { insert(gpus_, std::move(model)); }
void Catalog::add(SwitchModel model) { insert(switches_, std::move(model)); }
void Catalog::add(CpuModel model) { insert(cpus_, std::move(model)); }
void Catalog::add(NicModel model) { insert(nics_, std::move(model)); }
void Catalog::add(NcclModel model) {
  auto [it, fresh] = nccl_.emplace(model.name, model);
  if (!fresh)
    throw InputError(model.where.file, model.where.pointer,
                     "a second NCCL model for architecture '" + model.name + "' (first at " + it->second.where.file +
                         ":" + it->second.where.pointer + ")");
}

void Catalog::add(NcclVersion version) {
  auto [it, fresh] = nccl_versions_.emplace(version.name, version);
  if (!fresh)
    throw InputError(version.where.file, version.where.pointer,
                     "a second NCCL version '" + version.name + "' (first at " + it->second.where.file + ":" +
                         it->second.where.pointer + ")");
  for (const auto& [name, other] : nccl_versions_)
    if (name != version.name && compare_versions(version.name, name) == 0)
      throw InputError(version.where.file, version.where.pointer,
                       "NCCL " + version.name + " is the same release line as " + name +
                           "; each release belongs to one modelled line");
}

std::vector<const NcclVersion*> Catalog::nccl_lines() const {
  std::vector<const NcclVersion*> lines;
  for (const auto& entry : nccl_versions_) lines.push_back(&entry.second);
  std::sort(lines.begin(), lines.end(),
            [](const NcclVersion* a, const NcclVersion* b) { return compare_versions(a->name, b->name) < 0; });
  return lines;
}

void Catalog::set_default_nccl(const std::string& version, const SourceRef& where) {
  if (!default_nccl_.empty())
    throw InputError(where.file, where.pointer, "a second nccl_default ('" + default_nccl_ + "' is set already)");
  default_nccl_ = version;
}

void Catalog::set_megatron_arguments(MegatronArgumentTable table) {
  if (!megatron_arguments_.empty())
    throw InputError(table.where.file, table.where.pointer,
                     "a second megatron_arguments (" + megatron_arguments_.where.file + " has them already)");
  megatron_arguments_ = std::move(table);
}

Catalog::NcclLine Catalog::nccl_line(const std::string& version) const {
  std::string wanted = version.empty() ? default_nccl_ : version;
  std::vector<const NcclVersion*> lines = nccl_lines();
  std::vector<std::string> names;
  for (const NcclVersion* v : lines) names.push_back(v->name + " (" + v->tag + ")");
  if (wanted.empty()) throw UsageError("models/ has no NCCL version (models/nccl_versions.json)");
  for (const NcclVersion* v : lines)
    if (v->name == wanted || v->covers(wanted)) return {v, ""};
  // A release between two lines, or after the newest: the nearest older line stands for it.
  // "Older" compares major.minor, so 2.28.9 maps to 2.28 above and 2.29.2 to 2.28 here.
  static const std::regex release(R"(^[0-9]+\.[0-9]+(\.[0-9]+)*(-[0-9]+)?$)");
  const NcclVersion* older = nullptr;
  if (std::regex_match(wanted, release))
    for (const NcclVersion* v : lines)
      if (compare_versions(v->name, wanted) < 0) older = v;
  if (older == nullptr)
    throw UsageError("NCCL " + wanted + " is not modelled; modelled release lines: " + join(names, ", ") +
                     " (a release maps to its major.minor line or the nearest older one; topsim nccl versions)");
  return {older, "NCCL " + wanted + " is not a modelled line; using " + older->name + " (" + older->tag + "), the nearest older"};
}

const NcclVersion& Catalog::nccl_version(const std::string& version) const { return *nccl_line(version).line; }

void Catalog::add(ComputeModel model) {
  auto [it, fresh] = compute_.emplace(model.name, model);
  if (!fresh)
    throw InputError(model.where.file, model.where.pointer,
                     "a second compute model for architecture '" + model.name + "' (first at " + it->second.where.file +
                         ":" + it->second.where.pointer + ")");
}

void Catalog::add(Network network) { insert(networks_, std::move(network)); }
void Catalog::add(FrameworkModel model) { insert(frameworks_, std::move(model)); }
void Catalog::add(InferenceFrameworkModel model) { insert(inference_frameworks_, std::move(model)); }
void Catalog::add(LatencyBound bound) { insert(latency_bounds_, std::move(bound)); }
const LatencyBound* Catalog::latency_bound(const std::string& model) const {
  for (const auto& entry : latency_bounds_)
    if (entry.second.model == model) return &entry.second;
  return nullptr;
}
void Catalog::add(OptimizerModel model) { insert(optimizers_, std::move(model)); }
void Catalog::add(ShardingModel model) { insert(shardings_, std::move(model)); }
void Catalog::add(TransformerSpec model) { insert(transformers_, std::move(model)); }

const FrameworkModel& Catalog::framework(const std::string& name, const SourceRef& where) const {
  return find(frameworks_, name, where, "training framework");
}
const InferenceFrameworkModel& Catalog::inference_framework(const std::string& name, const SourceRef& where) const {
  return find(inference_frameworks_, name, where, "inference framework");
}

const OptimizerModel& Catalog::optimizer(const std::string& name, const SourceRef& where) const {
  return find(optimizers_, name, where, "optimizer");
}

const ShardingModel& Catalog::sharding(const std::string& name, const SourceRef& where) const {
  return find(shardings_, name, where, "parameter sharding");
}

const TransformerSpec& Catalog::transformer(const std::string& name, const SourceRef& where) const {
  return find(transformers_, name, where, "transformer model");
}

const ComputeModel& Catalog::compute(const std::string& architecture, const SourceRef& where) const {
  return find(compute_, architecture, where, "compute model (by GPU architecture)");
}

const Network& Catalog::network(const std::string& name, const SourceRef& where) const {
  return find(networks_, name, where, "network");
}

const NcclModel* Catalog::nccl(const std::string& architecture) const {
  auto it = nccl_.find(architecture);
  return it == nccl_.end() ? nullptr : &it->second;
}

const NcclProtocol* NcclModel::protocol(const std::string& protocol_name) const {
  for (const auto& p : protocols)
    if (p.name == protocol_name) return &p;
  return nullptr;
}

const LinkModel& Catalog::link(const std::string& name, const SourceRef& where) const {
  return find(links_, name, where, "link model");
}
const GpuModel& Catalog::gpu(const std::string& name, const SourceRef& where) const {
  return find(gpus_, name, where, "GPU model");
}
const SwitchModel& Catalog::switch_model(const std::string& name, const SourceRef& where) const {
  return find(switches_, name, where, "switch model");
}
const CpuModel& Catalog::cpu(const std::string& name, const SourceRef& where) const {
  return find(cpus_, name, where, "CPU model");
}
const NicModel& Catalog::nic(const std::string& name, const SourceRef& where) const {
  return find(nics_, name, where, "NIC model");
}

namespace {

void expect_kind(const Catalog& catalog, const std::string& name, LinkKind kind, const SourceRef& where) {
  const LinkModel& model = catalog.link(name, where);
  if (model.kind != kind)
    throw InputError(where.file, where.pointer,
                     "link model '" + name + "' is of kind " + to_string(model.kind) + ", expected a link model of kind " +
                         to_string(kind));
}

}  // namespace

void Catalog::link_kernel_constants() {
  for (auto& [name, model] : compute_) {
    if (model.kernels_from.empty()) continue;
    const SourceRef at = model.where.at("kernels_from");
    auto from = compute_.find(model.kernels_from);
    if (from == compute_.end() || from->second.kernels.empty() || !from->second.kernels_from.empty())
      throw InputError(at.file, at.pointer,
                       "'" + model.kernels_from + "' has no kernel constants of its own to lend (name an architecture whose \"kernels\" a table timed)");
    if (!model.kernels.empty())
      throw InputError(at.file, at.pointer, "an architecture with kernel constants of its own takes none from another");
    model.kernels = from->second.kernels;
  }
}

void Catalog::check_references() const {
  if (!nccl_versions_.empty()) {
    const SourceRef& at = nccl_versions_.begin()->second.where;
    if (default_nccl_.empty())
      throw InputError(at.file, "", "NCCL versions are modelled but no file sets \"nccl_default\"");
    try {
      nccl_version(default_nccl_);
    } catch (const UsageError& e) {
      throw InputError(at.file, "/nccl_default", e.what());
    }
  }
  for (const auto& [name, gpu] : gpus_) {
    if (!gpu.nvlink_model.empty()) expect_kind(*this, gpu.nvlink_model, LinkKind::nvlink, gpu.where.at("nvlink").at("model"));
    expect_kind(*this, gpu.pcie_model, LinkKind::pcie, gpu.where.at("pcie"));
  }
  for (const auto& [name, model] : switches_) {
    if (model.kind == SwitchKind::nvswitch)
      expect_kind(*this, model.nvlink_model, LinkKind::nvlink, model.where.at("nvlink_model"));
    if (model.kind == SwitchKind::network && !model.port_model.empty())
      expect_kind(*this, model.port_model, LinkKind::network, model.where.at("port_model"));
  }
  for (const auto& [name, nic] : nics_) {
    expect_kind(*this, nic.port_model, LinkKind::network, nic.where.at("port_model"));
    expect_kind(*this, nic.pcie_model, LinkKind::pcie, nic.where.at("pcie"));
  }
  for (const auto& [name, bound] : latency_bounds_)
    if (!networks_.count(bound.model) && !transformers_.count(bound.model))
      throw InputError(bound.where.file, bound.where.at("model").pointer,
                       "latency bound for unknown model '" + bound.model +
                           "' (a network of models/networks.json or a transformer of models/transformers.json)");
}

}  // namespace topsim

namespace topsim {

const char* to_string(Layer::Kind kind) {
  switch (kind) {
    case Layer::Kind::conv: return "conv";
    case Layer::Kind::linear: return "linear";
    case Layer::Kind::matmul: return "matmul";
    case Layer::Kind::elementwise: return "elementwise";
    case Layer::Kind::embedding: return "embedding";
  }
  return "?";
}

double Network::params() const {
  double total = 0;
  for (const Layer& layer : layers) total += layer.params;
  return total;
}

}  // namespace topsim
