// A JSON document read from a stream a list element at a time (nlohmann's parser
// callback), for inputs of gigabytes: Chrome traces, Google Benchmark JSON. Each
// element of the named top-level lists is handed over as soon as it is complete
// and then discarded; every other value is skipped without being kept. Memory is
// bounded by one element and by what the caller keeps, not by the file.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <functional>
#include <istream>
#include <set>
#include <string>
#include <vector>

namespace myriad::calibration {

// The most JSON values (keys, numbers, strings, lists, objects) one element may
// hold: a trace event or a benchmark holds tens.
inline constexpr std::size_t kMaxElementValues = 100'000;

struct JsonLists {
  // The top-level keys whose lists are streamed ("traceEvents").
  std::vector<std::string> keys;
  // Whether a document that is itself a list is streamed too, as list "".
  bool root_list = false;
};

// list: the key (or ""); index: the element's place in it.
using ElementHandler =
    std::function<void(const std::string& list, std::size_t index, const nlohmann::json& element)>;

// Reads `in` (from `path`, named in errors) to its end, calling `on_element` for
// each element of the lists `lists` names. Returns the lists found (a key whose
// value is not a list is not found). Throws std::runtime_error "PATH: JSON: ..."
// for a syntax error, and "PATH: LIST[I]: ..." for an element of more than
// kMaxElementValues values; what `on_element` throws goes through.
std::set<std::string> stream_json_lists(std::istream& in, const std::string& path,
                                        const JsonLists& lists, const ElementHandler& on_element);

}  // namespace myriad::calibration
