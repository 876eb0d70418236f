#include "models/scenario/json_file.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "models/scenario/text_file.hpp"

namespace myriad::models::scenario {
namespace {

// Counts the values of a document without building it, and stops at the first
// past `limit`: the document tree costs tens of bytes a value (a 128 MB list of
// zeros took 2.1 GB), so its size is known before it is built.
class ValueCounter : public nlohmann::json::json_sax_t {
 public:
  explicit ValueCounter(std::size_t limit) : limit_(limit) {}
  [[nodiscard]] std::size_t values() const { return values_; }
  [[nodiscard]] bool over() const { return values_ > limit_; }

  bool null() override { return count(); }
  bool boolean(bool /*value*/) override { return count(); }
  bool number_integer(number_integer_t /*value*/) override { return count(); }
  bool number_unsigned(number_unsigned_t /*value*/) override { return count(); }
  bool number_float(number_float_t /*value*/, const string_t& /*text*/) override { return count(); }
  bool string(string_t& /*value*/) override { return count(); }
  bool binary(binary_t& /*value*/) override { return count(); }
  bool start_object(std::size_t /*elements*/) override { return count(); }
  bool key(string_t& /*name*/) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t /*elements*/) override { return count(); }
  bool end_array() override { return true; }
  bool parse_error(std::size_t /*position*/, const std::string& /*last_token*/,
                   const nlohmann::json::exception& /*error*/) override {
    return false;  // the full parse that follows reports it, with its position
  }

 private:
  bool count() { return ++values_ <= limit_; }
  std::size_t limit_;
  std::size_t values_ = 0;
};

}  // namespace

nlohmann::json read_json_file(const std::string& path, std::string_view what) {
  const std::string text = read_text_file(path, what, kMaxJsonBytes);
  ValueCounter counter(kMaxJsonValues);
  nlohmann::json::sax_parse(text, &counter);
  if (counter.over()) {
    throw std::runtime_error(fmt::format(
        "{}: cannot read {}: more than {} JSON values (numbers, strings, lists, objects), the "
        "most such a file may hold (the ones Myriad writes have far fewer)",
        printable(path), what, kMaxJsonValues));
  }
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(fmt::format("{}: not valid JSON: {}", printable(path), e.what()));
  }
}

}  // namespace myriad::models::scenario
