#include "sim/chakra/et_set.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <fstream>
#include <optional>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

namespace myriad::sim::chakra {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kFormat = "myriad-chakra-et-set";
constexpr int kVersion = 1;
// Far above any cluster's GPU count; a manifest naming more is not a job's.
constexpr int kMaxRanks = 1 << 24;

// A set's name becomes part of file names: a plain one only.
void check_name(const std::string& name, const std::string& where) {
  const bool plain = !name.empty() && name != "." && name != ".." &&
                     name.find_first_of(std::string("/\\\0", 3)) == std::string::npos;
  if (!plain) {
    throw EtError(where + ": \"" + name + "\" is not a plain file name (no folders, not empty)");
  }
}

std::string rank_file_name(const std::string& name, int rank) {
  return name + "." + std::to_string(rank) + ".et";
}

// "<name>.<rank>.et" -> name and rank; nothing when the file is not named so.
std::optional<std::pair<std::string, int>> parse_rank_file_name(const std::string& file) {
  constexpr std::string_view kExt = ".et";
  if (file.size() <= kExt.size() || !file.ends_with(kExt)) return std::nullopt;
  const std::string stem = file.substr(0, file.size() - kExt.size());
  const auto dot = stem.rfind('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 == stem.size()) return std::nullopt;
  int rank = 0;
  const char* first = stem.data() + dot + 1;
  const char* last = stem.data() + stem.size();
  const auto [end, ec] = std::from_chars(first, last, rank);
  if (ec != std::errc() || end != last || rank < 0 || rank >= kMaxRanks) return std::nullopt;
  return std::make_pair(stem.substr(0, dot), rank);
}

// Each of 0 .. ranks - 1 in exactly one of the files' ascending lists.
void check_cover(int ranks, const std::vector<std::vector<int>>& lists, const std::string& where) {
  if (ranks < 1 || ranks > kMaxRanks) {
    throw EtError(where + ": ranks " + std::to_string(ranks) + " is not in 1 .. " +
                  std::to_string(kMaxRanks));
  }
  std::vector<int> owner(static_cast<std::size_t>(ranks), -1);
  for (std::size_t f = 0; f < lists.size(); ++f) {
    const auto& list = lists[f];
    if (list.empty()) throw EtError(where + ": file " + std::to_string(f) + " stands for no rank");
    for (std::size_t k = 0; k < list.size(); ++k) {
      const int r = list[k];
      if (r < 0 || r >= ranks) {
        throw EtError(where + ": file " + std::to_string(f) + ": rank " + std::to_string(r) +
                      " is not in 0 .. " + std::to_string(ranks - 1));
      }
      if (k > 0 && r <= list[k - 1]) {
        throw EtError(where + ": file " + std::to_string(f) + ": ranks must ascend");
      }
      auto& o = owner[static_cast<std::size_t>(r)];
      if (o >= 0) {
        throw EtError(where + ": rank " + std::to_string(r) + " is in files " + std::to_string(o) +
                      " and " + std::to_string(f));
      }
      o = static_cast<int>(f);
    }
  }
  const auto missing = std::find(owner.begin(), owner.end(), -1);
  if (missing != owner.end()) {
    throw EtError(where + ": rank " + std::to_string(missing - owner.begin()) + " is in no file");
  }
}

std::vector<std::vector<int>> rank_lists(const EtSet& set) {
  std::vector<std::vector<int>> lists;
  lists.reserve(set.files.size());
  for (const EtRankFile& f : set.files) lists.push_back(f.ranks);
  return lists;
}

// Writes file i's graph, `graph_of(i)`, for each list of ranks, then the manifest.
template <typename GraphOf>
fs::path write_files(const fs::path& dir, const std::string& name, int ranks,
                     const std::vector<std::vector<int>>& lists, GraphOf graph_of,
                     const EtGraphChecks& checks) {
  fs::path manifest = dir / et_manifest_name(name);
  check_name(name, manifest.string());
  check_cover(ranks, lists, manifest.string());
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw EtError(dir.string() + ": cannot create: " + ec.message());
  json files = json::array();
  for (std::size_t i = 0; i < lists.size(); ++i) {
    const std::string file = rank_file_name(name, lists[i].front());
    write_et_file(graph_of(i), dir / file, checks);
    files.push_back({{"file", file}, {"ranks", lists[i]}});
  }
  const json root = {{"format", kFormat},
                     {"version", kVersion},
                     {"name", name},
                     {"ranks", ranks},
                     {"files", std::move(files)}};
  std::ofstream out(manifest, std::ios::binary | std::ios::trunc);
  out << root.dump(1) << '\n';
  if (!out) throw EtError(manifest.string() + ": write failed");
  return manifest;
}

// A manifest's key, checked: present, of its type.
const json& key(const json& object, const char* name, json::value_t type,
                const std::string& where) {
  const auto it = object.find(name);
  if (it == object.end()) throw EtError(where + ": missing key \"" + name + "\"");
  const bool ok =
      it->type() == type || (type == json::value_t::number_integer && it->is_number_unsigned());
  if (!ok) {
    throw EtError(where + ": key \"" + name + "\": expected " + json(type).type_name() +
                  "-typed value, found " + it->type_name());
  }
  return *it;
}

void only_keys(const json& object, std::initializer_list<const char*> known,
               const std::string& where) {
  for (const auto& item : object.items()) {
    const std::string& k = item.key();
    if (std::none_of(known.begin(), known.end(), [&](const char* n) { return k == n; })) {
      std::string message = where;
      message.append(": unknown key \"").append(k).append("\"");
      throw EtError(message);
    }
  }
}

int integer(const json& value, const std::string& where) {
  if (!value.is_number_integer())
    throw EtError(where + ": expected an integer, found " + std::string(value.type_name()));
  if (value.is_number_unsigned()
          ? value.get<std::uint64_t>() > static_cast<std::uint64_t>(kMaxRanks)
          : (value.get<std::int64_t>() < 0 || value.get<std::int64_t>() > kMaxRanks)) {
    throw EtError(where + ": " + value.dump() + " is not in 0 .. " + std::to_string(kMaxRanks));
  }
  return value.get<int>();
}

EtSet read_manifest(const fs::path& path, const EtReadOptions& options) {
  const std::string where = path.string();
  std::ifstream in(path, std::ios::binary);
  if (!in) throw EtError(where + ": cannot open for reading");
  json root;
  try {
    root = json::parse(in);
  } catch (const json::parse_error& e) {
    throw EtError(where + ": not JSON: " + e.what());
  }
  if (!root.is_object()) throw EtError(where + ": expected a JSON object");
  only_keys(root, {"format", "version", "name", "ranks", "files"}, where);
  if (key(root, "format", json::value_t::string, where) != kFormat) {
    throw EtError(where + ": format is not \"" + std::string(kFormat) + "\"");
  }
  if (integer(key(root, "version", json::value_t::number_integer, where), where + ": version") !=
      kVersion) {
    throw EtError(where + ": version " + root["version"].dump() + " (this reader knows 1)");
  }
  EtSet set;
  set.name = key(root, "name", json::value_t::string, where).get<std::string>();
  check_name(set.name, where + ": name");
  set.ranks = integer(key(root, "ranks", json::value_t::number_integer, where), where + ": ranks");
  const json& files = key(root, "files", json::value_t::array, where);
  for (std::size_t i = 0; i < files.size(); ++i) {
    const std::string at = where + ": files[" + std::to_string(i) + "]";
    if (!files[i].is_object()) throw EtError(at + ": expected an object");
    only_keys(files[i], {"file", "ranks"}, at);
    EtRankFile f;
    f.file = key(files[i], "file", json::value_t::string, at).get<std::string>();
    check_name(f.file, at + ": file");
    for (const json& r : key(files[i], "ranks", json::value_t::array, at)) {
      f.ranks.push_back(integer(r, at + ": ranks"));
    }
    set.files.push_back(std::move(f));
  }
  check_cover(set.ranks, rank_lists(set), where);
  for (EtRankFile& f : set.files) f.graph = read_et_file(path.parent_path() / f.file, options);
  return set;
}

EtSet read_rank_files(const fs::path& dir, const EtReadOptions& options) {
  std::vector<std::pair<std::string, int>> found;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    if (auto parsed = parse_rank_file_name(entry.path().filename().string()))
      found.push_back(*parsed);
  }
  if (found.empty()) {
    throw EtError(dir.string() + ": no manifest (*.et.json) and no trace named <name>.<rank>.et");
  }
  std::sort(found.begin(), found.end());
  if (found.front().first != found.back().first) {
    throw EtError(dir.string() + ": traces of several sets (" + found.front().first + ", " +
                  found.back().first + "): name one's manifest or file");
  }
  EtSet set{.name = found.front().first, .ranks = static_cast<int>(found.size()), .files = {}};
  for (std::size_t r = 0; r < found.size(); ++r) {
    if (found[r].second != static_cast<int>(r)) {
      throw EtError(dir.string() + ": " + rank_file_name(set.name, static_cast<int>(r)) +
                    " is missing (rank files must run from 0 without gaps)");
    }
    EtRankFile f{.ranks = {static_cast<int>(r)},
                 .graph = {},
                 .file = rank_file_name(set.name, static_cast<int>(r))};
    f.graph = read_et_file(dir / f.file, options);
    set.files.push_back(std::move(f));
  }
  return set;
}

}  // namespace

std::string et_manifest_name(const std::string& name) { return name + ".et.json"; }

fs::path write_et_set(const fs::path& dir, const EtSet& set, const EtGraphChecks& checks) {
  return write_files(
      dir, set.name, set.ranks, rank_lists(set),
      [&](std::size_t i) -> const EtGraph& { return set.files[i].graph; }, checks);
}

fs::path write_et_set(const fs::path& dir, const std::string& name,
                      const std::vector<EtGraph>& per_rank, const EtGraphChecks& checks) {
  std::vector<std::vector<int>> lists(per_rank.size());
  for (std::size_t r = 0; r < lists.size(); ++r) lists[r] = {static_cast<int>(r)};
  return write_files(
      dir, name, static_cast<int>(per_rank.size()), lists,
      [&](std::size_t i) -> const EtGraph& { return per_rank[i]; }, checks);
}

EtSet read_et_set(const fs::path& path, const EtReadOptions& options) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    std::vector<fs::path> manifests;
    for (const auto& entry : fs::directory_iterator(path)) {
      if (entry.is_regular_file() && entry.path().filename().string().ends_with(".et.json")) {
        manifests.push_back(entry.path());
      }
    }
    std::sort(manifests.begin(), manifests.end());
    if (manifests.size() > 1) {
      throw EtError(path.string() + ": several manifests (" + manifests[0].filename().string() +
                    ", " + manifests[1].filename().string() + ", ...): name one");
    }
    return manifests.empty() ? read_rank_files(path, options)
                             : read_manifest(manifests[0], options);
  }
  if (!fs::is_regular_file(path, ec)) throw EtError(path.string() + ": no such file or folder");
  if (path.extension() == ".json") return read_manifest(path, options);
  const std::string file = path.filename().string();
  const auto parsed = parse_rank_file_name(file);
  const int rank = parsed ? parsed->second : 0;
  EtSet set{.name = parsed ? parsed->first : path.stem().string(), .ranks = rank + 1, .files = {}};
  set.files.push_back({.ranks = {rank}, .graph = read_et_file(path, options), .file = file});
  return set;
}

}  // namespace myriad::sim::chakra
