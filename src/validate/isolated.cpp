#include "validate/isolated.hpp"

#include <cstdio>
#include <sstream>
#include <stdexcept>

#include "util/error.hpp"
#include "util/processes.hpp"
#include "util/text.hpp"

namespace topsim {

namespace {

// Fields are tab-separated, records newline-separated: both are escaped inside fields.
std::string escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '\\') out += "\\\\";
    else if (c == '\t') out += "\\t";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

std::string unescape(const std::string& text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\\' || i + 1 == text.size()) {
      out += text[i];
      continue;
    }
    char c = text[++i];
    out += c == 't' ? '\t' : c == 'n' ? '\n' : c;
  }
  return out;
}

std::string serialize(const std::vector<ValidationResult>& results) {
  std::string out;
  for (const ValidationResult& r : results) {
    std::vector<std::string> things(r.things.begin(), r.things.end());
    out += "R\t" + std::string(r.evaluated ? "1" : "0") + "\t" + exact_text(r.predicted) + "\t" + escape(r.quantity) + "\t" +
           escape(r.detail) + "\t" + escape(join(things, ",")) + "\t" +
           escape(r.accuracy_class) + "\t" + (r.nccl_predicted ? exact_text(*r.nccl_predicted) : std::string("-")) + "\t" +
           std::to_string(r.data_parallel) + "\n";
  }
  return out;
}

std::vector<ValidationResult> parse_child(const std::vector<ValidationRow>& rows, const std::string& text) {
  std::vector<ValidationResult> results;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::vector<std::string> f = split(line, '\t');
    if (f.size() != 9 || f[0] != "R" || results.size() >= rows.size())
      throw std::runtime_error("a prediction's child process wrote an unexpected line: " + line);
    ValidationResult r;
    r.row = rows[results.size()];
    r.evaluated = f[1] == "1";
    r.predicted = std::strtod(f[2].c_str(), nullptr);
    r.error = (r.predicted - r.row.measured()) / r.row.measured();
    r.quantity = unescape(f[3]);
    r.detail = unescape(f[4]);
    for (const std::string& thing : split(unescape(f[5]), ','))
      if (!thing.empty()) r.things.insert(thing);
    r.accuracy_class = unescape(f[6]);
    if (f[7] != "-") r.nccl_predicted = std::strtod(f[7].c_str(), nullptr);
    r.data_parallel = std::atoi(f[8].c_str());
    results.push_back(r);
  }
  if (results.size() != rows.size())
    throw std::runtime_error("a prediction's child process returned " + std::to_string(results.size()) + " of " +
                             std::to_string(rows.size()) + " rows");
  return results;
}

}  // namespace

std::vector<std::vector<ValidationResult>> evaluate_in_children(const std::vector<ChildPrediction>& asked, int parallel,
                                                                Progress* progress) {
  std::vector<std::size_t> items(asked.size());
  for (std::size_t i = 0; i < items.size(); ++i) items[i] = i;
  std::vector<std::string> texts =
      run_in_processes(items, parallel, [&](std::size_t i) { return serialize(asked[i].body()); }, progress);
  std::vector<std::vector<ValidationResult>> results;
  for (std::size_t i = 0; i < asked.size(); ++i) results.push_back(parse_child(*asked[i].rows, texts[i]));
  return results;
}

std::vector<ValidationResult> evaluate_in_child(const std::vector<ValidationRow>& rows,
                                                const std::function<std::vector<ValidationResult>()>& body) {
  return evaluate_in_children({ChildPrediction{&rows, body}}, 1).front();
}

}  // namespace topsim
