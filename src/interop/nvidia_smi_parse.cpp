// The text of `nvidia-smi topo -m` into an SmiMatrix: what real captures look like (docs/import.md):
// tab-separated columns with empty cells, space-aligned copies, a header underlined with terminal
// escapes (or their remains once a paste dropped the ESC byte), a header whose labels lost their
// tabs, prompt lines above it and the legends below.
#include <algorithm>
#include <cctype>
#include <map>

#include "interop/nvidia_smi.hpp"
#include "util/error.hpp"
#include "util/text.hpp"

namespace topsim {

namespace {

const char* const kCells = "X, NV# (NV1, NV2, ...), PIX, PXB, PHB, NODE or SYS";

// A word and the display column it starts at (tabs expanded to stops of 8, as a terminal shows them).
struct Word {
  std::string text;
  std::size_t column = 0;
  std::size_t at = 0;  ///< offset in the line
};

std::vector<Word> words_at(const std::string& line) {
  std::vector<Word> out;
  std::size_t column = 0, at = 0;
  for (char c : line) {
    bool space = std::isspace(static_cast<unsigned char>(c));
    if (!space && (out.empty() || out.back().at + out.back().text.size() != at)) out.push_back({"", column, at});
    ++at;
    if (!space) out.back().text += c;
    column = c == '\t' ? (column / 8 + 1) * 8 : column + 1;
  }
  return out;
}

std::vector<std::string> words(const std::string& line) {
  std::vector<std::string> out;
  for (Word& w : words_at(line)) out.push_back(std::move(w.text));
  return out;
}

std::string trimmed(const std::string& s) {
  std::size_t a = 0, b = s.size();
  while (a < b && std::isspace(static_cast<unsigned char>(s[a]))) ++a;
  while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1]))) --b;
  return s.substr(a, b - a);
}

// nvidia-smi underlines the header on a terminal (ESC[4m ... ESC[0m). A captured file keeps the
// escapes; a pasted copy often loses the ESC byte and keeps "[4m". Cells never contain '['.
std::string without_escapes(const std::string& line) {
  std::string out;
  for (std::size_t i = 0; i < line.size(); ++i) {
    std::size_t at = line[i] == '\x1b' && i + 1 < line.size() && line[i + 1] == '[' ? i + 2 : line[i] == '[' ? i + 1 : i;
    if (at != i) {
      std::size_t end = at;
      while (end < line.size() && (std::isdigit(static_cast<unsigned char>(line[end])) || line[end] == ';')) ++end;
      if (end < line.size() && std::isalpha(static_cast<unsigned char>(line[end])) && (line[i] == '\x1b' || line[end] == 'm')) {
        i = end;
        continue;
      }
    }
    if (line[i] != '\r') out += line[i];
  }
  return out;
}

bool is_device_label(const std::string& w) {
  if (w == "CPU" || w == "NUMA" || w == "GPU") return false;
  bool digit = std::any_of(w.begin(), w.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
  bool name = std::all_of(w.begin(), w.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
  });
  return digit && name;
}

// "GPU0GPU1GPU2mlx5_0": labels whose separators a copy lost. GPU labels are peeled off the front;
// whatever follows the last one is a label of its own.
std::vector<std::string> unfused(const std::string& w) {
  std::vector<std::string> out;
  std::size_t at = 0;
  while (w.compare(at, 3, "GPU") == 0 && at + 3 < w.size() && std::isdigit(static_cast<unsigned char>(w[at + 3]))) {
    std::size_t end = at + 3;
    while (end < w.size() && std::isdigit(static_cast<unsigned char>(w[end]))) ++end;
    out.push_back(w.substr(at, end - at));
    at = end;
  }
  if (at < w.size()) out.push_back(w.substr(at));
  return out;
}

bool numbered(const std::string& w, const std::string& prefix, int n) { return w == prefix + std::to_string(n); }

bool is_relation(const std::string& w) {
  return w == "X" || smi_nvlinks(w) || w == "PIX" || w == "PXB" || w == "PHB" || w == "NODE" || w == "SYS" || w == "SOC";
}

// What begins an affinity column: a core or node list, or N/A.
bool is_affinity(const std::string& w) {
  return w == "N/A" || (!w.empty() && std::isdigit(static_cast<unsigned char>(w[0])));
}

// Names of the columns after the devices: tab-separated as nvidia-smi prints them, else the known
// multi-word names matched greedily and any other word as a column of its own. Each with the
// display column it starts at.
std::vector<Word> extra_columns(const std::string& header, std::size_t rest_at) {
  std::vector<Word> out;
  std::vector<Word> w = words_at(header);
  w.erase(std::remove_if(w.begin(), w.end(), [&](const Word& x) { return x.column < rest_at; }), w.end());
  if (header.find('\t') != std::string::npos) {
    // Words separated by a single space (not a tab) belong to one name.
    for (const Word& x : w) {
      if (!out.empty() && out.back().at + out.back().text.size() + 1 == x.at && header[x.at - 1] == ' ')
        out.back().text += " " + x.text;
      else
        out.push_back(x);
    }
    return out;
  }
  const std::vector<std::string> known = {"CPU Affinity", "NUMA Affinity", "GPU NUMA ID"};
  for (std::size_t i = 0; i < w.size();) {
    bool matched = false;
    for (const std::string& k : known) {
      std::vector<std::string> kw = words(k);
      bool equal = i + kw.size() <= w.size();
      for (std::size_t j = 0; equal && j < kw.size(); ++j) equal = w[i + j].text == kw[j];
      if (equal) {
        out.push_back({k, w[i].column});
        i += kw.size();
        matched = true;
        break;
      }
    }
    if (!matched) out.push_back(w[i++]);
  }
  return out;
}

// A row's label, device cells and extra fields, however it was laid out.
struct RowFields {
  std::string label;
  std::vector<std::string> fields;  ///< cells, then the extra columns
};

}  // namespace

std::optional<int> smi_nvlinks(const std::string& cell) {
  if (cell.size() < 3 || cell.compare(0, 2, "NV") != 0) return std::nullopt;
  int n = 0;
  for (std::size_t i = 2; i < cell.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(cell[i])) || n > 1000) return std::nullopt;
    n = n * 10 + (cell[i] - '0');
  }
  return n >= 1 ? std::optional<int>(n) : std::nullopt;
}

namespace {

class SmiParser {
 public:
  SmiParser(const std::string& text, const std::string& file) {
    m_.file = file;
    for (const std::string& line : split(text, '\n')) lines_.push_back(without_escapes(line));
  }

  SmiMatrix parse() {
    read_header();
    for (std::size_t r = 0; r < m_.labels.size(); ++r, ++at_) read_row(r);
    read_legends();
    return std::move(m_);
  }

 private:
  [[noreturn]] void fail(std::size_t index, const std::string& message) const {
    throw InputError(m_.file, std::to_string(index + 1), message);
  }

  // The first line whose first word is GPU0 (or begins with it, when the labels lost their tabs);
  // anything above it is what nvidia-smi or a shell prompt printed first. A row starts with GPU0
  // too, but its second word is a relation.
  void read_header() {
    auto is_header = [](const std::vector<std::string>& w) {
      return !w.empty() && w.front().compare(0, 4, "GPU0") == 0 && (w.size() < 2 || !is_relation(w[1]));
    };
    while (header_ < lines_.size() && !is_header(words(lines_[header_]))) ++header_;
    if (header_ == lines_.size())
      throw InputError(m_.file, "1",
                       "no header line: expected the column names nvidia-smi topo -m prints first "
                       "(GPU0 GPU1 ... [NIC0 ...] CPU Affinity NUMA Affinity)");
    std::size_t rest_at = 0;
    for (const Word& w : words_at(lines_[header_])) {
      if (!is_device_label(w.text)) break;
      for (const std::string& label : unfused(w.text)) {
        std::size_t i = m_.labels.size();
        bool gpu = label.compare(0, 3, "GPU") == 0;
        if (gpu && (m_.gpus != static_cast<int>(i) || !numbered(label, "GPU", m_.gpus)))
          fail(header_, "column " + std::to_string(i + 1) + " is '" + label + "', expected GPU" + std::to_string(i) +
                            " (GPUs first, numbered from 0)");
        if (gpu) ++m_.gpus;
        m_.labels.push_back(label);
        starts_.push_back(w.column);
      }
      rest_at = w.column + w.text.size();
    }
    for (const Word& x : extra_columns(lines_[header_], rest_at)) {
      extras_.push_back(x.text);
      starts_.push_back(x.column);
    }
    auto index = [&](const std::string& name) {
      auto it = std::find(extras_.begin(), extras_.end(), name);
      return it == extras_.end() ? -1 : static_cast<int>(it - extras_.begin());
    };
    cpu_col_ = index("CPU Affinity");
    numa_col_ = index("NUMA Affinity");
    at_ = header_ + 1;
  }

  // nvidia-smi separates fields by one tab each, empty cells included; a space-aligned copy keeps
  // them only as positions under the header's columns.
  RowFields split_row(std::size_t at) const {
    const std::string& line = lines_[at];
    RowFields row;
    const std::size_t n = m_.labels.size();
    if (line.find('\t') != std::string::npos) {
      std::vector<std::string> f = split(line, '\t');
      row.label = trimmed(f.front());
      for (std::size_t i = 1; i < f.size(); ++i) row.fields.push_back(trimmed(f[i]));
      return row;
    }
    std::vector<Word> w = words_at(line);
    row.label = w.front().text;
    // As many words as columns, or a NIC row without affinity: nothing can be empty.
    if (w.size() == 1 + n + extras_.size() || w.size() <= 1 + n) {
      for (std::size_t i = 1; i < w.size(); ++i) row.fields.push_back(w[i].text);
      return row;
    }
    row.fields.assign(n + extras_.size(), "");
    for (std::size_t i = 1; i < w.size(); ++i) {
      // The last column starting at or before the word (centred cells such as " X " start one later).
      auto after = std::upper_bound(starts_.begin(), starts_.end(), w[i].column + 1);
      std::size_t column = static_cast<std::size_t>(after - starts_.begin());
      if (column == 0 || !row.fields[column - 1].empty())
        fail(at, "row " + row.label + ": '" + w[i].text +
                     "' does not line up under one of the header's columns; separate the columns with tabs as "
                     "nvidia-smi prints them, or align each value under its column name");
      row.fields[column - 1] = w[i].text;
    }
    return row;
  }

  void read_row(std::size_t r) {
    const std::size_t n = m_.labels.size();
    while (at_ < lines_.size() && words(lines_[at_]).empty() && r == 0) ++at_;
    std::vector<std::string> first = at_ < lines_.size() ? words(lines_[at_]) : std::vector<std::string>{};
    if (first.empty() || first.front() != m_.labels[r])
      fail(std::min(at_, lines_.size() - 1),
           "expected the row of " + m_.labels[r] + " (one row per column, in the header's order), found " +
               (first.empty() ? std::string("no row") : "'" + first.front() + "'"));
    RowFields row = split_row(at_);
    std::vector<std::string>& f = row.fields;
    // A missing cell shifts the affinity into the matrix: count the relations that lead the row.
    std::size_t relations = 0;
    while (relations < f.size() && is_relation(f[relations])) ++relations;
    bool shifted = relations < f.size() && relations < n && is_affinity(f[relations]);
    if (f.size() < n || shifted || relations > n || (relations < n && f[relations].empty()))
      fail(at_, "row " + m_.labels[r] + " has " + std::to_string(std::min(f.size(), relations)) + " cells, expected " +
                    std::to_string(n) + " (one per column " + m_.labels.front() + ".." + m_.labels.back() + ")");
    std::vector<std::string> cells(f.begin(), f.begin() + static_cast<long>(n));
    for (std::size_t c = 0; c < n; ++c) check_cell(r, c, cells[c]);
    auto extra = [&](int column) {
      std::size_t i = n + static_cast<std::size_t>(column);
      return column >= 0 && i < f.size() && f[i] != "N/A" ? f[i] : std::string();
    };
    std::string cpu = extra(cpu_col_), numa = extra(numa_col_);
    check_list(cpu, "CPU Affinity", "a list of cores like 0-19,40-59", 1 << 20);
    check_list(numa, "NUMA Affinity", "a NUMA node (0 to 4095) or a list of them like 0-3", 4095);
    m_.cells.push_back(cells);
    m_.lines.push_back(static_cast<int>(at_ + 1));
    m_.cpu_affinity.push_back(cpu);
    m_.numa_affinity.push_back(numa);
  }

  void check_cell(std::size_t r, std::size_t c, std::string& cell) const {
    if (cell == "SOC") cell = "SYS";  // the name of SYS before driver 384
    bool ok = cell == "X" ? c == r
                          : c != r && (smi_nvlinks(cell) || cell == "PIX" || cell == "PXB" || cell == "PHB" ||
                                       cell == "NODE" || cell == "SYS");
    const std::string where = "row " + m_.labels[r] + ", column " + m_.labels[c];
    if (!ok) {
      // "PH0-115": a cell run into the CPU Affinity after it, a tab and letters lost in a copy.
      bool fused = c + 1 == m_.labels.size() && cell.size() > 2 && std::isupper(static_cast<unsigned char>(cell[0])) &&
                   std::any_of(cell.begin(), cell.end(), [](char x) { return std::isdigit(static_cast<unsigned char>(x)); });
      if (fused)
        fail(at_, where + ": '" + cell +
                      "' is not a relation: the last cell runs into the CPU Affinity after it (the text lost a tab and "
                      "part of the cell when it was copied); take the output of nvidia-smi topo -m again");
      fail(at_, where + ": '" + cell + "' is not a relation; expected " +
                    (c == r ? std::string("X (the device itself)") : std::string(kCells)));
    }
    bool gpu_pair = static_cast<int>(r) < m_.gpus && static_cast<int>(c) < m_.gpus;
    if (smi_nvlinks(cell) && !gpu_pair)
      fail(at_, where + ": " + cell + " between a NIC and another device; NVLinks join GPUs only");
    if (c < r && m_.cells[c][r] != cell)
      fail(at_, where + " reads " + cell + " but row " + m_.labels[c] + " (line " + std::to_string(m_.lines[c]) +
                    ") reads " + m_.cells[c][r] + "; the matrix must be symmetric");
  }

  void check_list(const std::string& text, const std::string& column, const std::string& valid, int most) const {
    if (text.empty()) return;
    bool ok = true;
    try {
      std::vector<int> values = parse_int_list(text);
      ok = std::all_of(values.begin(), values.end(), [&](int v) { return v <= most; });
    } catch (const ParseError&) {
      ok = false;
    }
    if (!ok) fail(at_, "row " + m_.labels[m_.cells.size()] + ": " + column + " '" + text + "' is not " + valid + " or N/A");
  }

  // After the rows: the NIC legend ("  NIC0: mlx5_0") and the relation legend. `topo -mp` prints
  // the legend without its NV# line; a prompt line may show the command.
  void read_legends() {
    std::map<std::string, std::string> legend;
    for (std::size_t i = 0; i < lines_.size(); ++i) {
      std::vector<std::string> w = words(lines_[i]);
      if (i >= at_ && w.size() == 2 && w[0].size() > 1 && w[0].back() == ':' && w[0].compare(0, 3, "NIC") == 0)
        legend[w[0].substr(0, w[0].size() - 1)] = w[1];
      if (i >= at_ && w.size() >= 3 && w[0] == "X" && w[1] == "=" && w[2] == "Self" && !m_.legend_line) m_.legend_line = static_cast<int>(i + 1);
      if (i >= at_ && !w.empty() && w[0] == "NV#") m_.legend_names_nvlinks = true;
      if (i < header_ && lines_[i].find("topo -mp") != std::string::npos) m_.mp_command_line = static_cast<int>(i + 1);
    }
    for (std::size_t i = static_cast<std::size_t>(m_.gpus); i < m_.labels.size(); ++i) {
      const std::string& label = m_.labels[i];
      bool numbered_nic = numbered(label, "NIC", static_cast<int>(i) - m_.gpus);
      m_.nic_names.push_back(legend.count(label) ? legend[label] : numbered_nic ? "" : label);
    }
  }

  SmiMatrix m_;
  std::vector<std::string> lines_;
  std::size_t header_ = 0;
  std::size_t at_ = 0;
  std::vector<std::size_t> starts_;  ///< display column of each device label, then each extra column
  std::vector<std::string> extras_;
  int cpu_col_ = -1;
  int numa_col_ = -1;
};

}  // namespace

SmiMatrix parse_nvidia_smi(const std::string& text, const std::string& file) { return SmiParser(text, file).parse(); }

}  // namespace topsim
