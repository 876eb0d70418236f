#include "models/scenario/pipeline_layout.hpp"

#include <fmt/format.h>

#include <cctype>

#include "models/scenario/parallel_spec.hpp"

namespace myriad::models::scenario {
namespace {

// Recursive descent over  seq := item*,  item := atom ('*' N)?,
// atom := E | t | m | L | '|' | '(' seq ')', writing the repeats out.
class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  bool run(std::string& out) {
    if (!sequence(out, 0)) return false;
    if (at_ < text_.size()) return fail("a ')' without its '('");
    return true;
  }
  [[nodiscard]] const std::string& error() const { return error_; }
  [[nodiscard]] std::size_t where() const { return at_ + 1; }

 private:
  static constexpr int kMaxDepth = 16;

  void skip() {
    while (at_ < text_.size() && (text_[at_] == ',' || text_[at_] == ' ')) ++at_;
  }

  bool fail(std::string message) {
    error_ = std::move(message);
    return false;
  }

  bool sequence(std::string& out, int depth) {
    if (depth > kMaxDepth) return fail(fmt::format("parentheses nested deeper than {}", kMaxDepth));
    for (skip(); at_ < text_.size() && text_[at_] != ')'; skip()) {
      std::string item;
      const char c = text_[at_];
      if (c == '(') {
        ++at_;
        if (!sequence(item, depth + 1)) return false;
        if (at_ >= text_.size()) return fail("a '(' without its ')'");
        ++at_;  // ')'
      } else if (c == 'E' || c == 't' || c == 'm' || c == 'L' || c == '|') {
        item = c;
        ++at_;
      } else {
        return fail(
            fmt::format("'{}' is not part of a layout: expected E (embedding), t "
                        "(transformer layer), m (MTP block), L (loss), | (between "
                        "chunks), (...) or *N",
                        c));
      }
      skip();
      long count = 1;
      if (at_ < text_.size() && text_[at_] == '*') {
        ++at_;
        skip();
        if (at_ >= text_.size() || std::isdigit(static_cast<unsigned char>(text_[at_])) == 0) {
          return fail("expected a count after '*'");
        }
        count = 0;
        while (at_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[at_])) != 0) {
          count = count * 10 + (text_[at_] - '0');
          if (count > static_cast<long>(kMaxLayoutLength)) {
            return fail(fmt::format("a count above {}", kMaxLayoutLength));
          }
          ++at_;
        }
      }
      if (!item.empty() &&
          static_cast<std::size_t>(count) > (kMaxLayoutLength - out.size()) / item.size()) {
        return fail(
            fmt::format("the layout written out is longer than {} characters", kMaxLayoutLength));
      }
      for (long k = 0; k < count; ++k) out += item;
    }
    return true;
  }

  std::string_view text_;
  std::size_t at_ = 0;
  std::string error_;
};

}  // namespace

PipelineLayout parse_pipeline_layout(std::string_view text) {
  PipelineLayout layout;
  Parser parser(text);
  std::string flat;
  if (!parser.run(flat)) {
    layout.error = parser.error();
    layout.where = parser.where();
    return layout;
  }
  layout.stages.emplace_back();
  for (const char c : flat) {
    LayoutStage& stage = layout.stages.back();
    switch (c) {
      case '|':
        layout.stages.emplace_back();
        continue;
      case 'E':
        stage.embedding = true;
        break;
      case 't':
        ++stage.layers;
        break;
      case 'm':
        ++stage.mtp;
        break;
      default:  // 'L'
        stage.loss = true;
        break;
    }
    stage.text += c;
  }
  return layout;
}

void derive_layout_layers(ParallelSpec& p) {
  p.layout_layers.clear();
  if (p.pipeline_layout.empty()) return;
  const PipelineLayout layout = parse_pipeline_layout(p.pipeline_layout);
  if (!layout.ok() || static_cast<int>(layout.stages.size()) != p.pp * p.virtual_stages) return;
  for (const LayoutStage& stage : layout.stages) p.layout_layers.push_back(stage.layers);
}

}  // namespace myriad::models::scenario
