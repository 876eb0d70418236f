// faults.replay: a real cluster's failure log (CSV) read into
// faults.replayed, every problem at its file, line and column.
#include "models/scenario/reliability_checks.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "models/scenario/fabric_domains.hpp"
#include "models/scenario/text_file.hpp"
#include "models/scenario/units.hpp"

namespace myriad::models::scenario {
namespace {

constexpr std::size_t kMaxReplayErrors = 20;  // then the rest of a bad replay file is not read

}  // namespace

// Over 100 lines: issue 43 rewrites this reader (streaming, bounded).
// NOLINTNEXTLINE(readability-function-size)
void load_fault_replay(Scenario& s, Diagnostics& d) {
  if (s.faults.replay.empty()) return;
  namespace fs = std::filesystem;
  fs::path path(s.faults.replay);
  if (path.is_relative()) path = fs::path(s.file).parent_path() / path;
  const std::string file = path.string();
  std::string text;
  try {
    text = read_text_file(file, "a failure replay", kMaxScenarioBytes);
  } catch (const std::runtime_error& e) {
    d.error(s.origins.count("faults.replay") != 0 ? s.origins.at("faults.replay")
                                                  : Location{s.file, 0, 0},
            "faults.replay", e.what());
    return;
  }
  const auto components = std::vector<std::pair<std::string_view, Component>>{
      {"gpu", Component::gpu},          {"hbm", Component::hbm},   {"nic", Component::nic},
      {"switch", Component::switch_},   {"link", Component::link}, {"host", Component::host},
      {"software", Component::software}};
  const auto domains = std::vector<std::pair<std::string_view, Domain>>{
      {"node", Domain::node},    {"leaf", Domain::leaf},   {"pod", Domain::pod},
      {"rack", Domain::rack},    {"plane", Domain::plane}, {"spine", Domain::spine},
      {"uplink", Domain::uplink}};
  // Columns by name, from the header.
  enum Column { time, component, id, duration, domain, tier, kColumns };
  constexpr std::array<std::string_view, kColumns> kNames = {"time",     "component", "id",
                                                             "duration", "domain",    "tier"};
  std::array<int, kColumns> column{};
  column.fill(-1);
  bool header = false;
  int line_no = 0;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + start, end - start);
    start = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const auto first = line.find_first_not_of(" \t");
    if (first == std::string_view::npos || line[first] == '#') continue;
    // Fields with their 1-based columns, trimmed.
    std::vector<std::pair<std::string_view, int>> fields;
    std::size_t f = 0;
    while (true) {
      std::size_t comma = line.find(',', f);
      if (comma == std::string_view::npos) comma = line.size();
      std::string_view field = line.substr(f, comma - f);
      int col = static_cast<int>(f) + 1;
      while (!field.empty() && (field.front() == ' ' || field.front() == '\t')) {
        field.remove_prefix(1);
        ++col;
      }
      while (!field.empty() && (field.back() == ' ' || field.back() == '\t'))
        field.remove_suffix(1);
      fields.emplace_back(field, col);
      if (comma == line.size()) break;
      f = comma + 1;
    }
    const auto where = [&](int col) { return Location{file, line_no, col}; };
    if (!header) {
      header = true;
      for (std::size_t i = 0; i < fields.size(); ++i) {
        const auto it = std::find(kNames.begin(), kNames.end(), fields[i].first);
        if (it == kNames.end()) {
          d.error(where(fields[i].second), "faults.replay",
                  fmt::format("unknown column '{}': expected time, component, id, duration, "
                              "domain, tier",
                              printable(fields[i].first)));
          return;
        }
        column[static_cast<std::size_t>(it - kNames.begin())] = static_cast<int>(i);
      }
      for (const Column c : {time, component, id}) {
        if (column[c] < 0) {
          d.error(where(1), "faults.replay",
                  fmt::format("the header has no '{}' column: expected time, component, id "
                              "(and optionally duration, domain, tier)",
                              kNames[c]));
          return;
        }
      }
      continue;
    }
    InjectedEventSpec e;
    e.where = fmt::format("{}:{}", file, line_no);
    bool ok = true;
    const auto field = [&](Column c) -> std::pair<std::string_view, int> {
      if (column[c] < 0) return {{}, 1};
      if (static_cast<std::size_t>(column[c]) >= fields.size())
        return {{}, static_cast<int>(line.size()) + 1};
      return fields[static_cast<std::size_t>(column[c])];
    };
    const auto fail = [&](Column c, const std::string& what) {
      d.error(where(field(c).second), "faults.replay",
              fmt::format("column '{}': {}", kNames[c], what));
      ok = false;
    };
    if (fields.size() >
        static_cast<std::size_t>(*std::max_element(column.begin(), column.end())) + 1) {
      d.error(where(1), "faults.replay",
              fmt::format("{} fields where the header has {}", fields.size(),
                          *std::max_element(column.begin(), column.end()) + 1));
      ok = false;
    }
    for (const Column c : {time, duration}) {
      const auto [value, col] = field(c);
      if (value.empty()) {
        if (c == time) fail(c, "missing: expected a time with a unit, such as 10h");
        continue;
      }
      const auto parsed = parse_quantity(value, Dimension::time);
      if (const auto* failure = std::get_if<ParseFailure>(&parsed)) {
        fail(c, failure->message);
      } else if (std::get<double>(parsed) < 0) {
        fail(c, fmt::format("expected 0 or later, found '{}'", printable(value)));
      } else {
        (c == time ? e.at_s : e.repair_s) = std::get<double>(parsed);
      }
    }
    const std::string_view comp = field(component).first;
    const auto cit = std::find_if(components.begin(), components.end(),
                                  [&](const auto& x) { return x.first == comp; });
    if (cit == components.end()) {
      fail(component, fmt::format("expected one of gpu, hbm, nic, switch, link, host, software, "
                                  "found '{}'",
                                  printable(comp)));
    } else {
      e.component = cit->second;
      e.replace_node = e.component != Component::software;
    }
    const std::string_view dom = field(domain).first;
    if (!dom.empty()) {
      const auto dit = std::find_if(domains.begin(), domains.end(),
                                    [&](const auto& x) { return x.first == dom; });
      if (dit == domains.end()) {
        fail(domain,
             fmt::format("expected one of node, leaf, pod, rack, plane, spine (tier 1), uplink "
                         "(tier 0), found '{}'",
                         printable(dom)));
      } else {
        e.domain = dit->second;
      }
    }
    const std::string_view idv = field(id).first;
    int value = 0;
    const auto [ptr, ec] = std::from_chars(idv.data(), idv.data() + idv.size(), value);
    if (idv.empty() || ec != std::errc() || ptr != idv.data() + idv.size() || value < 0) {
      fail(id,
           fmt::format("expected a node or domain index (0, 1, ...), found '{}'", printable(idv)));
    } else {
      e.id = value;
      if (e.domain == Domain::node) e.node = value;
    }
    // A spine's or an uplink's tier (default_fabric_tier where the row has none).
    const std::string_view tv = field(tier).first;
    if (!tv.empty()) {
      int t = -1;
      const auto [tp, te] = std::from_chars(tv.data(), tv.data() + tv.size(), t);
      if (te != std::errc() || tp != tv.data() + tv.size() || t < 0) {
        fail(tier, fmt::format("expected a tier (0, 1, ...), found '{}'", printable(tv)));
      } else if (!is_fabric_port(e.domain)) {
        fail(tier, "applies to domain spine and uplink");
      } else {
        e.tier = t;
      }
    }
    if (ok) s.faults.replayed.push_back(e);
    if (d.all().size() > kMaxReplayErrors) return;
  }
  if (!header) {
    d.error(Location{file, 1, 1}, "faults.replay",
            "empty: expected a header (time,component,id,duration) and one failure a row");
  }
}

}  // namespace myriad::models::scenario
