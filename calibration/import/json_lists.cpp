#include "calibration/import/json_lists.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace myriad::calibration {
namespace {

using nlohmann::json;
using Event = json::parse_event_t;

// nlohmann's parser callback: depth is the value's depth (the document 0, a
// top-level key 1, an element of a top-level list 2); returning false drops the
// value from the document being built, and a container dropped at its start has
// nothing inside it kept.
class ListStreamer {
 public:
  ListStreamer(const std::string& path, const JsonLists& lists, const ElementHandler& on_element)
      : path_(path), lists_(lists), on_element_(on_element) {}

  bool operator()(int depth, Event event, json& parsed) {
    if (in_list_ && depth > element_depth_) {
      if (++values_ > kMaxElementValues) {
        throw std::runtime_error(fmt::format(
            "{}: {}[{}]: more than {} JSON values in one element: not a trace event or a "
            "benchmark",
            path_, list_, index_, kMaxElementValues));
      }
      return true;
    }
    if (in_list_ && depth == element_depth_) return element(event, parsed);
    if (depth == 0) return document(event);
    if (depth == 1 && root_object_) return top_level(event, parsed);
    return false;  // inside a value that is skipped
  }

  std::set<std::string> found;

 private:
  bool element(Event event, json& parsed) {
    switch (event) {
      case Event::object_start:
      case Event::array_start:
        values_ = 0;
        return true;
      case Event::object_end:
      case Event::array_end:
      case Event::value:
        try {
          on_element_(list_, index_, parsed);
        } catch (const json::exception& e) {  // a value of another type than read: where
          throw std::runtime_error(fmt::format("{}: {}[{}]: {}", path_, list_, index_, e.what()));
        }
        ++index_;
        return false;
      case Event::key:
        return true;
    }
    return false;
  }

  bool document(Event event) {
    if (event == Event::object_start) root_object_ = true;
    if (event == Event::array_start && lists_.root_list && !lists_.keys.empty()) {
      start(lists_.keys.front(), 1);
      return true;
    }
    if (event == Event::array_end) in_list_ = false;
    return event != Event::array_start;
  }

  bool top_level(Event event, json& parsed) {
    switch (event) {
      case Event::key:
        key_ = parsed.get<std::string>();
        wanted_ = std::find(lists_.keys.begin(), lists_.keys.end(), key_) != lists_.keys.end();
        return wanted_;
      case Event::array_start:
        if (!wanted_) return false;
        start(key_, 2);
        return true;
      case Event::array_end:
        in_list_ = false;
        return true;
      default:
        return false;  // a wanted key holding no list, or a value of another key
    }
  }

  void start(const std::string& list, int depth) {
    in_list_ = true;
    list_ = list;
    element_depth_ = depth;
    index_ = 0;
    found.insert(list);
  }

  const std::string& path_;
  const JsonLists& lists_;
  const ElementHandler& on_element_;
  bool root_object_ = false;
  std::string key_;
  bool wanted_ = false;
  bool in_list_ = false;
  std::string list_;
  int element_depth_ = 0;
  std::size_t index_ = 0;
  std::size_t values_ = 0;
};

}  // namespace

std::set<std::string> stream_json_lists(std::istream& in, const std::string& path,
                                        const JsonLists& lists, const ElementHandler& on_element) {
  ListStreamer streamer(path, lists, on_element);
  try {
    // What is left of the document: its top level, the streamed lists empty.
    const json skeleton = json::parse(
        in, [&](int depth, Event event, json& parsed) { return streamer(depth, event, parsed); });
  } catch (const json::parse_error& e) {
    throw std::runtime_error(fmt::format("{}: JSON: {}", path, e.what()));
  }
  return std::move(streamer.found);
}

}  // namespace myriad::calibration
