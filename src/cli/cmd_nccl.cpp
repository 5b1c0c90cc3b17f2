// topsim nccl: the NCCL release lines topsim models, and what a line's tuner chooses on a
// topology (algorithm, protocol, channels and NCCL's own estimate), without simulating.
#include "cli/coll_common.hpp"
#include "cli/common.hpp"
#include "util/error.hpp"
#include "util/text.hpp"
#include "util/units.hpp"

namespace topsim {

namespace {

struct ChooseArgs {
  std::string topology;
  std::string format;
  std::string ops = "allreduce,allgather,broadcast,sendrecv";
  std::string sizes = "8,1M,64M,1G";
  ScaleOut scale;
  std::string gpu;  ///< --gpu what-if
  RequestArgs request;
};

std::string versions_text(const Catalog& catalog, Format format) {
  Table table({{"line"}, {"releases"}, {"tag"}, {"default"}, {"allreduce"}, {"allgather"}, {"protocols"}, {"description"}});
  std::vector<const NcclVersion*> lines = catalog.nccl_lines();
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const NcclVersion& v = *lines[i];
    const std::string& name = v.name;
    // The releases this line stands for: its own major.minor, and those after it up to the next
    // line (mapped to it with a note); the newest line takes every later release.
    std::string releases = name + "+";
    if (i + 1 < lines.size()) {
      releases = name;
      const std::string& next = lines[i + 1]->name;
      std::size_t dot = next.find('.');
      int next_minor = std::stoi(next.substr(dot + 1)), minor = std::stoi(name.substr(name.find('.') + 1));
      if (next.substr(0, dot) == name.substr(0, name.find('.')) && next_minor > minor + 1)
        releases += "-" + next.substr(0, dot) + "." + std::to_string(next_minor - 1);
    }
    auto algos = [&](const char* op) {
      auto it = v.algorithms.find(op);
      return it == v.algorithms.end() ? std::string("-") : join(it->second, " ");
    };
    table.add_row({name, releases, v.tag, std::string(name == catalog.nccl_version("").name ? "yes" : ""),
                   algos("allreduce"), algos("allgather"), join(v.protocols, " "), v.description});
  }
  return table.render(format);
}

}  // namespace

void add_nccl_command(CLI::App& app, Context& context) {
  auto* nccl = app.add_subcommand("nccl", "NCCL release lines topsim models, and what their tuner chooses");
  nccl->require_subcommand(1);
  auto* versions = nccl->add_subcommand("versions", "List the modelled NCCL release lines");
  auto format = std::make_shared<std::string>();
  add_format_option(*versions, *format);
  versions->callback([format, &context]() {
    const Catalog& catalog = context.workspace().catalog();
    context.out = versions_text(catalog, parse_format(*format));
  });

  auto* choose = nccl->add_subcommand(
      "choose", "What NCCL's tuner picks per operation and size (algorithm, protocol, channels), without simulating");
  auto args = std::make_shared<ChooseArgs>();
  choose->add_option("topology", args->topology, "Topology or cluster file, or a bundled name")->required();
  add_format_option(*choose, args->format);
  choose->add_option("-o,--op", args->ops, "Operations, comma-separated")->default_val(args->ops);
  choose->add_option("-b,--sizes", args->sizes, "Sizes, comma-separated (nccl-tests style)")->default_val(args->sizes);
  add_scale_out_options(*choose, args->scale);
  add_gpu_option(*choose, args->gpu);
  add_request_options(*choose, args->request);
  choose->callback([args, &context]() {
    Format out_format = parse_format(args->format);
    const Catalog& catalog = context.workspace().catalog();
    Topology t = context.workspace().topology(args->topology, args->scale, args->gpu, catalog);
    std::vector<int> gpus(static_cast<std::size_t>(t.gpu_count()));
    for (int g = 0; g < t.gpu_count(); ++g) gpus[static_cast<std::size_t>(g)] = g;
    const NcclVersion& version = nccl_option(context, args->request.nccl);
    Communicator comm(t, gpus, version, routes_of(args->request));
    Table table({{"nccl"}, {"op"}, {"size_B", 0}, {"gpus"}, {"nodes"}, {"algo"}, {"proto"}, {"channels"},
                 {"nccl_estimate_us", 2}, {"runner_up"}});
    for (const std::string& op_name : split(args->ops, ',')) {
      CollOp op = parse_op(op_name);
      for (const std::string& size_text : split(args->sizes, ',')) {
        CollRequest request = request_of(args->request, op);
        request.size_B = size_option(size_text, "-b");
        CollSize size = nccl_tests_size(op, request.size_B, request.dtype, comm.ranks());
        Communicator::Choice choice = comm.choose(request, size);
        const Candidate& c = choice.candidates.at(static_cast<std::size_t>(choice.chosen));
        // The second best NCCL weighed, so that a golden shows how close the choice was.
        const Candidate* second = nullptr;
        for (const Candidate& o : choice.candidates)
          if (&o != &c && o.nccl.excluded.empty() && o.nccl.time_s >= 0 &&
              (second == nullptr || o.nccl.time_s < second->nccl.time_s))
            second = &o;
        std::string runner_up = second == nullptr ? "-"
                                                  : std::string(to_string(second->algo)) + "/" + to_string(second->proto) +
                                                        " " + fixed(second->nccl.time_s / kUs, 2) + " us";
        Cell estimate = c.nccl.time_s >= 0 ? Cell(c.nccl.time_s / kUs) : Cell(std::string("not tuned"));
        table.add_row({version.name, std::string(to_string(op)), whole(size.size_B), static_cast<long long>(comm.ranks()),
                       static_cast<long long>(comm.tuner_topology().nodes), std::string(to_string(c.algo)),
                       std::string(to_string(c.proto)), static_cast<long long>(c.channels), estimate, runner_up});
      }
    }
    context.out = table.render(out_format);
  });
  add_nccl_tuner_conf_command(*nccl, context);
}

}  // namespace topsim
