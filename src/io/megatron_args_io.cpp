// models/megatron.json: Megatron-LM's launch arguments (model/megatron_args.hpp).
#include <algorithm>
#include <regex>

#include "io/io.hpp"
#include "io/json_reader.hpp"
#include "io/model_reader.hpp"
#include "util/error.hpp"

namespace topsim {

namespace {

// "path:line@Megatron-LM@commit" or "path:first-last[,first-last...]@Megatron-LM@commit".
void check_citation(const std::string& text, const std::string& commit, const SourceRef& where) {
  static const std::regex form(R"(^[A-Za-z0-9_./-]+\.py:[0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*@Megatron-LM@([0-9a-f]{12})$)");
  std::smatch m;
  if (!std::regex_match(text, m, form) || m[4] != commit)
    fail(where, "expected a citation path.py:LINE@Megatron-LM@" + commit + " (the commit of \"commit\"), got '" + text + "'");
}

MegatronArgument read_argument(const std::string& name, const Json& value, const SourceRef& where, const std::string& commit) {
  ObjectReader r(value, where);
  MegatronArgument a;
  a.kind = read_enum<MegatronArgument::Kind>(
      r, "kind", {{"flag", MegatronArgument::Kind::flag}, {"integer", MegatronArgument::Kind::integer}, {"text", MegatronArgument::Kind::text}});
  const Json& d = r.required("default");
  const SourceRef at = r.at("default");
  if (d.is_null()) {
    if (a.kind == MegatronArgument::Kind::flag) fail(at, name + " is a flag: its default is true or false");
  } else if (a.kind == MegatronArgument::Kind::flag) {
    if (!d.is_boolean()) fail(at, "a flag's default is true or false, got " + describe(d));
    a.default_value = d.get<bool>() ? "true" : "false";
  } else if (a.kind == MegatronArgument::Kind::integer) {
    if (!d.is_number_integer()) fail(at, "an integer argument's default is an integer or null, got " + describe(d));
    a.default_value = std::to_string(d.get<long long>());
  } else {
    if (!d.is_string()) fail(at, "a text argument's default is a string or null, got " + describe(d));
    a.default_value = d.get<std::string>();
  }
  a.meaning = r.string("meaning");
  a.source = r.string("source");
  check_citation(a.source, commit, r.at("source"));
  r.finish();
  return a;
}

}  // namespace

MegatronArgumentTable read_megatron_arguments(const Json& value, const SourceRef& where) {
  ObjectReader r(value, where);
  MegatronArgumentTable t;
  t.where = where;
  t.commit = r.string("commit");
  if (!std::regex_match(t.commit, std::regex("^[0-9a-f]{12}$"))) fail(r.at("commit"), "expected 12 hex digits of a Megatron-LM commit");
  ObjectReader known(r.required("known_arguments"), r.at("known_arguments"));
  known.string("repository");
  known.string("tool");
  if (known.string("commit") != t.commit) fail(known.at("commit"), "the names must be read at \"commit\" " + t.commit);
  read_array(known, "files", read_string);
  t.known = read_array(known, "names", read_string);
  if (!std::is_sorted(t.known.begin(), t.known.end())) fail(known.at("names"), "expected the names sorted (tools/megatron_arg_names.py)");
  known.finish();
  const Json& accepted = r.required("accepted");
  expect_object(accepted, r.at("accepted"));
  for (const auto& item : accepted.items()) {
    const SourceRef at = r.at("accepted").at(item.key());
    if (!std::binary_search(t.known.begin(), t.known.end(), item.key()))
      fail(at, "'" + item.key() + "' is not an argument Megatron-LM defines (known_arguments/names)");
    t.accepted[item.key()] = read_argument(item.key(), item.value(), at, t.commit);
  }
  for (auto [key, out] : {std::pair{"refused", &t.refused}, {"rejections", &t.rejections}}) {
    const Json& section = r.required(key);
    expect_object(section, r.at(key));
    for (const auto& item : section.items()) {
      const SourceRef at = r.at(key).at(item.key());
      if (out == &t.refused && (!std::binary_search(t.known.begin(), t.known.end(), item.key()) || t.accepted.count(item.key())))
        fail(at, "'" + item.key() + "' must be an argument Megatron-LM defines that topsim does not accept");
      ObjectReader o(item.value(), at);
      MegatronRejection rejection{o.string("reason"), o.string("source")};
      check_citation(rejection.source, t.commit, o.at("source"));
      o.finish();
      (*out)[item.key()] = rejection;
    }
  }
  r.finish();
  return t;
}

}  // namespace topsim
