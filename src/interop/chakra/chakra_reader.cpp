// Chakra ET files -> topsim's trace (model/workload_spec.hpp), which Replay runs as any trace:
//   host nodes (is_cpu_op)   compute ops of their duration on the rank's "host" stream
//   COMP_NODE (GPU)          compute ops on the rank's "compute" stream (duration, or the model)
//   COMM_COLL_NODE (GPU)     one collective per matched set: the k-th collective of a process
//                            group (pg_name) on every rank that has it, as NCCL requires
//   COMM_SEND/RECV_NODE      one send per matched pair: the k-th send from a to b with a tag
//                            and the k-th receive of b from a with that tag
// A host or compute stream runs its nodes one at a time, in a topological order of the rank's
// dependencies (ties in file order), as ASTRA-sim's hardware resource issues one CPU op and one
// GPU kernel at a time; communication is ordered by its dependencies alone.
#include <filesystem>
#include <map>
#include <regex>
#include <set>

#include "interop/chakra/chakra.hpp"
#include "interop/chakra/chakra_nodes.hpp"
#include "util/error.hpp"
#include "util/text.hpp"

namespace topsim {

namespace {

// Ranks of PREFIX.<rank>.et files in PREFIX's folder, rising.
std::vector<int> rank_files(const std::string& prefix) {
  namespace fs = std::filesystem;
  fs::path p(prefix);
  fs::path dir = p.parent_path().empty() ? fs::path(".") : p.parent_path();
  const std::string base = p.filename().string();
  std::vector<int> ranks;
  std::error_code ec;
  if (base.empty() || !fs::is_directory(dir, ec)) return ranks;
  const std::regex pattern("\\.([0-9]{1,7})\\.et");
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    std::string name = entry.path().filename().string();
    std::smatch m;
    if (name.compare(0, base.size(), base) != 0) continue;
    std::string rest = name.substr(base.size());
    if (std::regex_match(rest, m, pattern) && entry.is_regular_file(ec)) ranks.push_back(std::stoi(m[1].str()));
  }
  std::sort(ranks.begin(), ranks.end());
  return ranks;
}

std::string join_ranks(const std::vector<int>& ranks) {
  std::vector<std::string> parts;
  for (int r : ranks) parts.push_back(std::to_string(r));
  return join(parts, ", ");
}

std::string file_of(const std::string& prefix, int rank) { return prefix + "." + std::to_string(rank) + ".et"; }

struct Assembly {
  const ChakraReadOptions& options;
  const std::vector<ChakraRankFile>& files;
  std::vector<std::vector<int>> file_ranks;       // per file: the ranks it stands for
  std::vector<std::vector<std::string>> op_name;  // per file, per node: its op
  TraceSpec trace;

  std::vector<std::string> after_of(std::size_t f, const ChakraNode& node) const {
    std::vector<std::string> names;
    for (std::size_t d : node.deps) names.push_back(op_name[f][d]);
    return names;
  }
  static void merge(std::vector<std::string>& into, const std::vector<std::string>& more) {
    for (const auto& m : more)
      if (std::find(into.begin(), into.end(), m) == into.end()) into.push_back(m);
  }

  void name_ops() {
    op_name.resize(files.size());
    // Collectives: per process group, the k-th on each file that has the group.
    std::map<std::string, std::vector<std::vector<std::size_t>>> by_group;  // pg -> file -> nodes in order
    std::map<std::tuple<int, int, long long>, std::vector<std::size_t>> sends, recvs;  // (src, dst, tag) -> nodes
    for (std::size_t f = 0; f < files.size(); ++f) {
      op_name[f].resize(files[f].nodes.size());
      for (std::size_t i : files[f].order) {
        const ChakraNode& n = files[f].nodes[i];
        const int rank = static_cast<int>(f);
        if (n.kind == ChakraNode::Kind::host || n.kind == ChakraNode::Kind::compute) {
          op_name[f][i] = "r" + std::to_string(f) + "." + std::to_string(n.id);
        } else if (n.kind == ChakraNode::Kind::collective) {
          auto& lists = by_group[n.pg];
          lists.resize(files.size());
          op_name[f][i] = "coll." + (n.pg.empty() ? std::string("world") : n.pg) + "." + std::to_string(lists[f].size());
          lists[f].push_back(i);
        } else {
          if (file_ranks[f].size() != 1)
            throw InputError(files[f].path, node_place(n),
                             "a send or receive in a trace that stands for several ranks (--chakra-ranks): its peer "
                             "would be the same rank for all of them; give one file per rank");
          bool send = n.kind == ChakraNode::Kind::send;
          auto key = send ? std::make_tuple(rank, n.peer, n.tag) : std::make_tuple(n.peer, rank, n.tag);
          if (n.peer == rank) throw InputError(files[f].path, node_place(n), "a send or receive to its own rank");
          auto& list = send ? sends[key] : recvs[key];
          op_name[f][i] = "p2p." + std::to_string(std::get<0>(key)) + "-" + std::to_string(std::get<1>(key)) + ".tag" +
                          std::to_string(n.tag) + "." + std::to_string(list.size());
          list.push_back(i);
        }
      }
    }
    add_collectives(by_group);
    add_sends(sends, recvs);
  }

  void add_collectives(const std::map<std::string, std::vector<std::vector<std::size_t>>>& by_group) {
    for (const auto& [pg, lists] : by_group) {
      std::vector<std::size_t> members;
      std::set<int> ranks;
      for (std::size_t f = 0; f < lists.size(); ++f)
        if (!lists[f].empty()) {
          members.push_back(f);
          ranks.insert(file_ranks[f].begin(), file_ranks[f].end());
        }
      const std::size_t first = members.front();
      for (std::size_t f : members)
        if (lists[f].size() != lists[first].size())
          throw InputError(files[f].path, node_place(files[f].nodes[lists[f].back()]),
                           "process group '" + (pg.empty() ? std::string("(none: every rank)") : pg) + "' has " +
                               std::to_string(lists[f].size()) + " collectives here and " +
                               std::to_string(lists[first].size()) + " in " + files[first].path +
                               "; every rank of a group runs its collectives in the same order");
      std::string group = "world";
      if (!pg.empty() || ranks.size() != trace.ranks + 0u) {
        group = "pg." + (pg.empty() ? std::string("default") : pg);
        trace.groups.push_back({group, std::vector<int>(ranks.begin(), ranks.end()), trace.where});
      }
      for (std::size_t k = 0; k < lists[first].size(); ++k) {
        const ChakraNode& a = files[first].nodes[lists[first][k]];
        TraceOp op;
        op.kind = TraceOp::Kind::collective;
        op.name = op_name[first][lists[first][k]];
        op.op = a.op;
        op.group = group;
        op.size_B = a.size_B;
        // The element type only sets how bytes divide into elements: comm_size is bytes.
        op.dtype = static_cast<long long>(a.size_B) % 4 == 0 ? "float" : "int8";
        op.stream = "comm." + op.name;  // ordered by its dependencies only
        op.where = {files[first].path, node_place(a)};
        for (std::size_t f : members) {
          const ChakraNode& b = files[f].nodes[lists[f][k]];
          if (b.op != a.op || b.size_B != a.size_B)
            throw InputError(files[f].path, node_place(b),
                             "collective " + std::to_string(k) + " of process group '" + pg + "' is " + b.op + " of " +
                                 fixed(b.size_B, 0) + " B here but " + a.op + " of " + fixed(a.size_B, 0) + " B in " +
                                 files[first].path + " (" + node_place(a) + ")");
          merge(op.after, after_of(f, b));
        }
        trace.ops.push_back(std::move(op));
      }
    }
  }

  void add_sends(const std::map<std::tuple<int, int, long long>, std::vector<std::size_t>>& sends,
                 const std::map<std::tuple<int, int, long long>, std::vector<std::size_t>>& recvs) {
    auto unmatched = [&](int file, std::size_t node, const std::string& what) {
      throw InputError(files[static_cast<std::size_t>(file)].path, node_place(files[static_cast<std::size_t>(file)].nodes[node]),
                       what + " (sends and receives match per source, destination and comm_tag, in order)");
    };
    for (const auto& [key, list] : sends) {
      auto [src, dst, tag] = key;
      auto it = recvs.find(key);
      std::size_t received = it == recvs.end() ? 0 : it->second.size();
      if (received < list.size())
        unmatched(src, list[received], "a send to rank " + std::to_string(dst) + " with tag " + std::to_string(tag) +
                                           " that rank " + std::to_string(dst) + " never receives");
      for (std::size_t k = 0; k < list.size(); ++k) {
        const ChakraNode& s = files[static_cast<std::size_t>(src)].nodes[list[k]];
        const ChakraNode& r = files[static_cast<std::size_t>(dst)].nodes[it->second[k]];
        if (s.size_B != r.size_B)
          unmatched(dst, it->second[k], "a receive of " + fixed(r.size_B, 0) + " B matched with a send of " + fixed(s.size_B, 0) + " B");
        TraceOp op;
        op.kind = TraceOp::Kind::send;
        op.name = op_name[static_cast<std::size_t>(src)][list[k]];
        op.src = src;
        op.dst = dst;
        op.size_B = s.size_B;
        op.stream = "comm." + op.name;
        op.where = {files[static_cast<std::size_t>(src)].path, node_place(s)};
        op.after = after_of(static_cast<std::size_t>(src), s);
        merge(op.after, after_of(static_cast<std::size_t>(dst), r));
        trace.ops.push_back(std::move(op));
      }
    }
    for (const auto& [key, list] : recvs) {
      auto it = sends.find(key);
      std::size_t sent = it == sends.end() ? 0 : it->second.size();
      if (sent < list.size())
        unmatched(std::get<1>(key), list[sent], "a receive from rank " + std::to_string(std::get<0>(key)) + " with tag " +
                                                    std::to_string(std::get<2>(key)) + " that rank " +
                                                    std::to_string(std::get<0>(key)) + " never sends");
    }
  }

  void add_compute() {
    for (std::size_t f = 0; f < files.size(); ++f)
      for (std::size_t i : files[f].order) {
        const ChakraNode& n = files[f].nodes[i];
        if (n.kind != ChakraNode::Kind::host && n.kind != ChakraNode::Kind::compute) continue;
        TraceOp op;
        op.kind = TraceOp::Kind::compute;
        op.name = op_name[f][i];
        op.ranks = file_ranks[f];
        op.stream = n.kind == ChakraNode::Kind::host ? "host" : "compute";
        op.where = {files[f].path, node_place(n)};
        op.after = after_of(f, n);
        if (n.kind == ChakraNode::Kind::compute && options.compute == ChakraReadOptions::Compute::model) {
          op.dtype = options.model_dtype;
          if (n.flops.value_or(0) > 0) {
            op.cost = TraceOp::Cost::flops;
            op.flops = *n.flops;
            op.bytes_B = n.bytes_B.value_or(0);
          } else {
            op.cost = TraceOp::Cost::memory;
            op.bytes_B = *n.bytes_B;
          }
        } else {
          op.cost = TraceOp::Cost::time;
          op.time_s = n.duration_s;
        }
        trace.ops.push_back(std::move(op));
      }
  }
};

}  // namespace

TraceSpec read_chakra(const std::string& prefix, const ChakraReadOptions& options, ChakraSummary* summary) {
  std::vector<int> found = rank_files(prefix);
  if (found.empty() || found.front() != 0)
    throw UsageError("--chakra " + prefix + ": no file " + file_of(prefix, 0) +
                     " (a Chakra trace is PREFIX.<rank>.et, one file per rank from 0)");
  for (std::size_t r = 0; r < found.size(); ++r)
    if (found[r] != static_cast<int>(r))
      throw UsageError("--chakra " + prefix + ": " + file_of(prefix, static_cast<int>(r)) + " is missing (found ranks " +
                       join_ranks(found) + "; a trace has one file per rank, 0 to " + std::to_string(found.back()) + ")");
  const int files = static_cast<int>(found.size());
  int ranks = files;
  if (options.ranks > 0 && options.ranks != files) {
    if (files != 1)
      throw UsageError("--chakra-ranks " + std::to_string(options.ranks) + ": the trace has " + std::to_string(files) +
                       " rank files; --chakra-ranks replays a one-file trace as that many ranks");
    ranks = options.ranks;
  }
  std::vector<ChakraRankFile> parsed;
  for (int f = 0; f < files; ++f) {
    // The file's raw messages are dropped as soon as they are checked: a big trace is held once.
    EtFile raw = read_et_file(file_of(prefix, f));
    parsed.push_back(parse_rank_file(raw, options, ranks));
  }
  Assembly a{options, parsed, {}, {}, {}};
  a.trace.ranks = ranks;
  a.trace.where = {file_of(prefix, 0), ""};
  a.trace.description = "Chakra ET " + prefix + ".*.et";
  for (int f = 0; f < files; ++f) {
    std::vector<int> stands_for;
    if (files == 1)
      for (int r = 0; r < ranks; ++r) stands_for.push_back(r);
    else
      stands_for.push_back(f);
    a.file_ranks.push_back(stands_for);
  }
  a.name_ops();
  a.add_compute();
  if (a.trace.ops.empty()) throw InputError(file_of(prefix, 0), "", "the trace has no nodes");
  if (summary) {
    *summary = {};
    summary->files = files;
    summary->ranks = ranks;
    for (const ChakraRankFile& f : parsed)
      for (const ChakraNode& n : f.nodes) {
        ++summary->nodes;
        if (n.kind == ChakraNode::Kind::host) ++summary->host_nodes;
        else if (n.kind == ChakraNode::Kind::compute) ++summary->compute_nodes;
        else if (n.kind == ChakraNode::Kind::collective) ++summary->collective_nodes;
        else ++summary->p2p_nodes;
      }
  }
  return a.trace;
}

}  // namespace topsim
