#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>

#include "io/io.hpp"
#include "io/json_reader.hpp"
#include "io/model_reader.hpp"
#include "util/error.hpp"
#include "util/text.hpp"

namespace topsim {

namespace {

LinkModel read_link(const std::string& name, const Json& value, const SourceRef& where) {
  return read_model<LinkModel>(name, value, where, [](ObjectReader& r, LinkModel& m, SourcedParameters& params) {
    m.kind = read_enum<LinkKind>(r, "kind",
                                 {{"nvlink", LinkKind::nvlink}, {"pcie", LinkKind::pcie}, {"socket", LinkKind::socket},
                                  {"numa", LinkKind::numa}, {"network", LinkKind::network}});
    m.bandwidth_Bps = params.quantity(r, "bandwidth", Quantity::bandwidth);
    m.efficiency = r.number("efficiency", 0, 1, true);
    params.add("efficiency");
    m.latency_s = params.quantity(r, "latency", Quantity::time);
    if (m.kind == LinkKind::pcie) m.lanes = params.integer(r, "lanes", 1, 32);
    if (m.kind == LinkKind::network && r.has("link_layer")) {
      m.link_layer = read_enum<std::string>(r, "link_layer", {{"infiniband", "infiniband"}, {"ethernet", "ethernet"}});
      params.add("link_layer");
    }
  });
}

// "pci_device_ids": ["0x20b5", ...]: 16-bit ids in NCCL's spelling (0x and four lower-case hex digits).
std::vector<std::string> read_pci_device_ids(ObjectReader& r, SourcedParameters& params) {
  if (!r.has("pci_device_ids")) return {};
  params.add("pci_device_ids");
  return read_array(r, "pci_device_ids", [](const Json& v, const SourceRef& at) {
    std::string id = v.is_string() ? v.get<std::string>() : "";
    bool ok = id.size() == 6 && id.compare(0, 2, "0x") == 0 &&
              std::all_of(id.begin() + 2, id.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)) || (c >= 'a' && c <= 'f'); });
    if (!ok) fail(at, "expected a PCI device id like \"0x20b5\" (0x and four lower-case hex digits), got " + describe(v));
    return id;
  });
}

const std::vector<std::string>& known_dtypes() {
  static const std::vector<std::string> dtypes = {"fp64", "fp64_tensor", "fp32", "tf32_tensor", "fp16",
                                                  "fp16_tensor", "bf16_tensor", "fp8_tensor", "fp4_tensor",
                                                  "int8_tensor"};
  return dtypes;
}

std::map<std::string, MathRate> read_math(ObjectReader& r, SourcedParameters& params) {
  const Json& math = r.required("math");
  SourceRef math_where = r.at("math");
  expect_object(math, math_where);
  if (math.empty()) fail(math_where, "at least one data type is needed; known: " + join(known_dtypes(), ", "));
  std::map<std::string, MathRate> rates;
  for (const auto& item : math.items()) {
    SourceRef at = math_where.at(item.key());
    const auto& dtypes = known_dtypes();
    if (std::find(dtypes.begin(), dtypes.end(), item.key()) == dtypes.end())
      fail(at, unknown_name_message("data type", item.key(), dtypes));
    ObjectReader rate(item.value(), at);
    SourcedParameters::Prefix scope(params, "math." + item.key());
    MathRate& mr = rates[item.key()];
    mr.dense_flops_per_s = params.quantity(rate, "dense", Quantity::flop_rate);
    if (auto sparse = params.optional_quantity(rate, "sparse", Quantity::flop_rate)) mr.sparse_flops_per_s = *sparse;
    rate.finish();
  }
  return rates;
}

/// "clocks": {"base": "1095MHz", "boost": "1410MHz", "tensor": "1830MHz"}: SM clocks of the datasheet;
/// base <= boost, and the tensor clock (optional) no more than boost.
std::string mhz_text(double clock_Hz) {
  double mhz = clock_Hz / 1e6;
  return (mhz == std::round(mhz) ? fixed(mhz, 0) : shortest(mhz)) + " MHz";
}

void read_clocks(ObjectReader& r, GpuModel& m, SourcedParameters& params) {
  SourceRef at = r.at("clocks");
  ObjectReader c(r.required("clocks"), at);
  SourcedParameters::Prefix scope(params, "clocks");
  m.base_clock_Hz = params.quantity(c, "base", Quantity::frequency);
  m.boost_clock_Hz = params.quantity(c, "boost", Quantity::frequency);
  if (m.boost_clock_Hz < m.base_clock_Hz)
    fail(at.at("boost"), "boost clock (" + mhz_text(m.boost_clock_Hz) + ") is below the base clock (" +
                             mhz_text(m.base_clock_Hz) + ")");
  if (auto tensor = params.optional_quantity(c, "tensor", Quantity::frequency)) {
    m.tensor_clock_Hz = *tensor;
    if (m.tensor_clock_Hz > m.boost_clock_Hz)
      fail(at.at("tensor"), "tensor clock (" + mhz_text(m.tensor_clock_Hz) + ") is above the boost clock (" +
                                mhz_text(m.boost_clock_Hz) + ")");
  }
  c.finish();
}

// "8.0", "12.0": CUDA compute capability as major.minor (digits, a dot, one digit).
std::string read_compute_capability(ObjectReader& r, SourcedParameters& params) {
  std::string cc = params.string(r, "compute_capability");
  std::size_t dot = cc.find('.');
  auto digits = [](const std::string& s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; });
  };
  bool ok = dot != std::string::npos && digits(cc.substr(0, dot)) && cc.size() == dot + 2 && digits(cc.substr(dot + 1));
  if (!ok) fail(r.at("compute_capability"), "expected a CUDA compute capability like \"8.0\" or \"12.0\", got '" + cc + "'");
  return cc;
}

/// "mig": {"memory_slices": 8, "profiles": {"1g.5gb": {"sms", "memory", "memory_slices", "instances"}}}:
/// each profile must fit the GPU (its SMs, memory and slices no more than the whole GPU's).
void read_mig(ObjectReader& r, GpuModel& m, SourcedParameters& params) {
  const Json* mig = r.optional("mig");
  if (mig == nullptr) return;
  SourceRef mig_at = r.at("mig");
  ObjectReader g(*mig, mig_at);
  params.add("mig");
  m.mig_memory_slices = g.integer("memory_slices", 1, 64);
  const Json& profiles = g.required("profiles");
  SourceRef profiles_at = g.at("profiles");
  expect_object(profiles, profiles_at);
  if (profiles.empty()) fail(profiles_at, "at least one profile is needed, e.g. \"1g.5gb\"");
  for (const auto& item : profiles.items()) {
    SourceRef at = profiles_at.at(item.key());
    ObjectReader p(item.value(), at);
    MigProfile profile;
    profile.name = item.key();
    profile.sms = p.integer("sms", 1, m.sms);
    profile.memory_B = p.quantity("memory", Quantity::size);
    if (profile.memory_B > m.memory_B * (1 + 1e-9))
      fail(at.at("memory"), "a MIG instance cannot hold more memory than the whole GPU (" +
                                fixed(m.memory_B / 1e9, 1) + " GB)");
    profile.memory_slices = p.integer("memory_slices", 1, m.mig_memory_slices);
    profile.instances = p.integer("instances", 1, m.mig_memory_slices);
    p.finish();
    m.mig_profiles.push_back(profile);
  }
  // Smallest first, as the guide lists them.
  std::stable_sort(m.mig_profiles.begin(), m.mig_profiles.end(), [](const MigProfile& a, const MigProfile& b) {
    return a.sms != b.sms ? a.sms < b.sms : a.memory_B < b.memory_B;
  });
  g.finish();
}

GpuModel read_gpu(const std::string& name, const Json& value, const SourceRef& where) {
  return read_model<GpuModel>(name, value, where, [](ObjectReader& r, GpuModel& m, SourcedParameters& params) {
    m.architecture = r.string("architecture");
    const std::vector<std::string>& architectures = known_architectures();
    if (std::find(architectures.begin(), architectures.end(), m.architecture) == architectures.end())
      fail(r.at("architecture"), unknown_name_message("architecture", m.architecture, architectures));
    if (const Json* nvlink = r.optional("nvlink")) {
      ObjectReader n(*nvlink, r.at("nvlink"));
      SourcedParameters::Prefix scope(params, "nvlink");
      m.nvlink_model = params.string(n, "model");
      m.nvlink_count = params.integer(n, "links", 1, 64);
      n.finish();
    }
    m.pcie_model = params.string(r, "pcie");
    m.peer_over_pcie = r.boolean("peer_over_pcie");
    params.add("peer_over_pcie");
    {
      ObjectReader mem(r.required("memory"), r.at("memory"));
      SourcedParameters::Prefix scope(params, "memory");
      m.memory_B = params.quantity(mem, "capacity", Quantity::size);
      m.memory_Bps = params.quantity(mem, "bandwidth", Quantity::bandwidth);
      mem.finish();
    }
    m.sms = params.integer(r, "sms", 1, 1024);  // thread blocks of one wave (compute model)
    read_clocks(r, m, params);
    m.l2_B = params.quantity(r, "l2", Quantity::size);
    m.compute_capability = read_compute_capability(r, params);
    m.math = read_math(r, params);
    {
      ObjectReader copy(r.required("copy"), r.at("copy"));
      SourcedParameters::Prefix scope(params, "copy");
      m.copy.write_latency_s = params.quantity(copy, "write_latency", Quantity::time);
      m.copy.memcpy_latency_s = params.quantity(copy, "memcpy_latency", Quantity::time);
      m.copy.staging_Bps = params.optional_quantity(copy, "staging_bandwidth", Quantity::bandwidth);
      m.copy.bidirectional_Bps = params.optional_quantity(copy, "bidirectional_bandwidth", Quantity::bandwidth);
      copy.finish();
    }
    m.tdp_W = params.quantity(r, "tdp", Quantity::power);
    read_mig(r, m, params);
    m.pci_device_ids = read_pci_device_ids(r, params);
    if (r.has("device_names")) {
      params.add("device_names");
      m.device_names = read_array(r, "device_names", [](const Json& v, const SourceRef& at) {
        if (!v.is_string() || v.get<std::string>().empty())
          fail(at, "expected a GPU name as nvidia-smi prints it, got " + describe(v));
        return v.get<std::string>();
      });
    }
  });
}

SwitchModel read_switch(const std::string& name, const Json& value, const SourceRef& where) {
  return read_model<SwitchModel>(name, value, where, [](ObjectReader& r, SwitchModel& m, SourcedParameters& params) {
    m.kind = read_enum<SwitchKind>(
        r, "kind", {{"nvswitch", SwitchKind::nvswitch}, {"pcie", SwitchKind::pcie}, {"network", SwitchKind::network}});
    if (m.kind == SwitchKind::nvswitch) {
      m.ports = params.integer(r, "ports", 1, 1 << 24);
      m.nvlink_model = params.string(r, "nvlink_model");
    } else if (m.kind == SwitchKind::network) {
      m.ports = params.integer(r, "ports", 1, 1 << 24);
      if (r.has("port_model")) m.port_model = params.string(r, "port_model");
      m.sharp = r.boolean("sharp");
      params.add("sharp");
    } else {
      m.lanes = params.integer(r, "lanes", 1, 1024);
    }
    m.latency_s = params.quantity(r, "latency", Quantity::time);
  });
}

CpuModel read_cpu(const std::string& name, const Json& value, const SourceRef& where) {
  return read_model<CpuModel>(name, value, where, [](ObjectReader& r, CpuModel& m, SourcedParameters& params) {
    m.pcie_lanes = params.integer(r, "pcie_lanes", 1, 1024);
    m.memory_Bps = params.quantity(r, "memory_bandwidth", Quantity::bandwidth);
    m.latency_s = params.quantity(r, "latency", Quantity::time);
    m.shared_host_bridge = r.boolean("shared_host_bridge");
    params.add("shared_host_bridge");
    if (auto cores = r.optional_integer("cores", 1, 4096)) {
      m.cores = *cores;
      params.add("cores");
    }
    // "socket_link": {"model": "upi-11.2", "count": 3}: what joins two sockets of this CPU.
    if (const Json* link = r.optional("socket_link")) {
      params.add("socket_link");
      ObjectReader l(*link, r.at("socket_link"));
      m.socket_link = l.string("model");
      m.socket_links = l.integer("count", 1, 64);
      l.finish();
    }
    // "cpuid": {"vendor": "GenuineIntel", "family": 6, "models": [106]}, as NCCL's XML names the CPU.
    if (const Json* cpuid = r.optional("cpuid")) {
      params.add("cpuid");
      ObjectReader c(*cpuid, r.at("cpuid"));
      m.cpuid_vendor = c.string("vendor");
      m.cpuid_family = c.integer("family", 0, 4095);
      m.cpuid_models = read_array(c, "models", [](const Json& v, const SourceRef& at) {
        if (!v.is_number_integer() || v.get<int>() < 0 || v.get<int>() > 4095)
          fail(at, "expected a CPUID model number (0 to 4095), got " + describe(v));
        return v.get<int>();
      });
      c.finish();
    }
  });
}

NicModel read_nic(const std::string& name, const Json& value, const SourceRef& where) {
  return read_model<NicModel>(name, value, where, [](ObjectReader& r, NicModel& m, SourcedParameters& params) {
    m.port_model = params.string(r, "port_model");
    m.ports = params.integer(r, "ports", 1, 16);
    m.pcie_model = params.string(r, "pcie");
    m.pci_device_ids = read_pci_device_ids(r, params);
    if (r.has("card_link_layers")) {
      params.add("card_link_layers");
      m.card_link_layers = read_array(r, "card_link_layers", [](const Json& v, const SourceRef& at) {
        std::string layer = v.is_string() ? v.get<std::string>() : "";
        if (layer != "infiniband" && layer != "ethernet")
          fail(at, "expected \"infiniband\" or \"ethernet\", got " + describe(v));
        return layer;
      });
    }
    if (r.has("transport")) {
      params.add("transport");
      m.transport = r.string("transport");
      static const std::vector<std::string> transports = {"ib_verbs", "roce", "efa", "socket"};
      if (std::find(transports.begin(), transports.end(), m.transport) == transports.end())
        fail(r.at("transport"), unknown_name_message("transport", m.transport, transports));
    }
    m.message_latency_s = params.optional_quantity(r, "message_latency", Quantity::time).value_or(0);
    m.flush_latency_s = params.optional_quantity(r, "flush_latency", Quantity::time).value_or(0);
  });
}

NcclModel read_nccl(const std::string& name, const Json& value, const SourceRef& where) {
  const std::vector<std::string>& architectures = known_architectures();
  if (std::find(architectures.begin(), architectures.end(), name) == architectures.end())
    fail(where, unknown_name_message("architecture", name, architectures) + " (nccl_models are keyed by architecture)");
  return read_model<NcclModel>(name, value, where, [](ObjectReader& r, NcclModel& m, SourcedParameters& params) {
    if ((m.nvlink_efficiency = r.optional_number("nvlink_efficiency", 0, 1, true))) params.add("nvlink_efficiency");
    if ((m.pcie_efficiency = r.optional_number("pcie_efficiency", 0, 1, true))) params.add("pcie_efficiency");
    m.gpu_Bps = params.optional_quantity(r, "gpu_bandwidth", Quantity::bandwidth);
    if ((m.nvls_efficiency = r.optional_number("nvls_efficiency", 0, 1, true))) params.add("nvls_efficiency");
    m.host_launch_s = params.optional_quantity(r, "host_launch", Quantity::time).value_or(0);
    const Json& protocols = r.required("protocols");
    SourceRef at = r.at("protocols");
    expect_object(protocols, at);
    static const std::vector<std::string> known = {"ll", "ll128", "simple"};
    if (protocols.empty()) fail(at, "at least one protocol is needed; known: ll, ll128, simple");
    for (const std::string& proto_name : known) {
      const Json* entry = protocols.contains(proto_name) ? &protocols.at(proto_name) : nullptr;
      if (entry == nullptr) continue;
      ObjectReader p(*entry, at.at(proto_name));
      SourcedParameters::Prefix scope(params, "protocols." + proto_name);
      NcclProtocol proto;
      proto.name = proto_name;
      proto.efficiency = p.number("efficiency", 0, 1, true);
      params.add("efficiency");
      proto.ring_base_s = params.quantity(p, "ring_base", Quantity::time);
      proto.tree_base_s = params.quantity(p, "tree_base", Quantity::time);
      proto.nvlink_hop_s = params.quantity(p, "nvlink_hop", Quantity::time);
      proto.pcie_hop_s = params.quantity(p, "pcie_hop", Quantity::time);
      proto.network_hop_s = params.quantity(p, "network_hop", Quantity::time);
      proto.chunk_B = params.quantity(p, "chunk", Quantity::size);
      p.finish();
      m.protocols.push_back(proto);
    }
    for (const auto& item : protocols.items())
      if (std::find(known.begin(), known.end(), item.key()) == known.end())
        fail(at.at(item.key()), unknown_name_message("protocol", item.key(), known));
  });
}

void check_model_name(const std::string& name, const SourceRef& where) {
  bool ok = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_';
  });
  if (!ok) fail(where, "model name '" + name + "' may use only a-z, 0-9, '-', '_' and '.'");
}

template <typename Reader>
void read_section(Catalog& catalog, ObjectReader& file, const std::string& key, Reader reader) {
  const Json* section = file.optional(key);
  if (section == nullptr) return;
  SourceRef where = file.at(key);
  expect_object(*section, where);
  for (const auto& item : section->items()) {
    check_model_name(item.key(), where.at(item.key()));
    catalog.add(reader(item.key(), item.value(), where.at(item.key())));
  }
}

}  // namespace

const std::vector<std::string>& known_architectures() {
  static const std::vector<std::string> architectures = {"pascal", "volta", "turing", "ampere",
                                                         "ada",    "hopper", "blackwell"};
  return architectures;
}

std::string read_text_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw InputError(path, "", "is a directory, expected a file");
  FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) throw InputError(path, "", std::string("cannot open: ") + std::strerror(errno));
  std::string text;
  char buffer[65536];
  std::size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, file)) > 0) text.append(buffer, n);
  bool failed = std::ferror(file) != 0;
  std::fclose(file);
  if (failed) throw InputError(path, "", "read error");
  return text;
}

std::vector<std::string> model_files(const std::string& models_dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(models_dir, ec))
    throw InputError(models_dir, "", "models directory not found (set it with --models DIR)");
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(models_dir, ec))
    if (entry.is_regular_file() && entry.path().extension() == ".json") files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  if (files.empty()) throw InputError(models_dir, "", "no *.json model files in this directory");
  return files;
}

Catalog load_catalog(const std::string& models_dir, bool user_models) {
  Catalog catalog;
  auto notes = user_models ? std::make_shared<std::vector<std::string>>() : nullptr;
  for (const auto& path : model_files(models_dir)) add_catalog_text(catalog, read_text_file(path), path, notes);
  catalog.link_kernel_constants();
  catalog.check_references();
  if (notes)
    for (const std::string& note : *notes) catalog.add_note(note);
  return catalog;
}

void add_catalog_text(Catalog& catalog, const std::string& text, const std::string& path,
                      std::shared_ptr<std::vector<std::string>> user_notes) {
  Json document = parse_json_text(text, path);
  ObjectReader file(document, SourceRef{path, "", std::move(user_notes)});
  file.optional_string("description");
  read_section(catalog, file, "link_models", read_link);
  read_section(catalog, file, "gpu_models", read_gpu);
  read_section(catalog, file, "switch_models", read_switch);
  read_section(catalog, file, "cpu_models", read_cpu);
  read_section(catalog, file, "nic_models", read_nic);
  read_section(catalog, file, "nccl_models", read_nccl);
  read_section(catalog, file, "nccl_versions", read_nccl_version);
  if (auto version = file.optional_string("nccl_default")) catalog.set_default_nccl(*version, file.at("nccl_default"));
  read_section(catalog, file, "compute_models", read_compute);
  read_section(catalog, file, "networks", read_network);
  read_section(catalog, file, "training_frameworks", read_framework);
  read_section(catalog, file, "inference_frameworks", read_inference_framework);
  read_section(catalog, file, "latency_bounds", read_latency_bound);
  read_section(catalog, file, "optimizers", read_optimizer);
  read_section(catalog, file, "parameter_sharding", read_sharding);
  read_section(catalog, file, "transformers", read_transformer);
  if (const Json* megatron = file.optional("megatron_arguments"))
    catalog.set_megatron_arguments(read_megatron_arguments(*megatron, file.at("megatron_arguments")));
  file.finish();
}

}  // namespace topsim
