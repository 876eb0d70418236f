#include "tools/cli/printable_streambuf.hpp"

#include <string>
#include <string_view>

#include "models/scenario/text_file.hpp"

namespace myriad::cli {

PrintableStreambuf::int_type PrintableStreambuf::overflow(int_type c) {
  if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
  const char ch = traits_type::to_char_type(c);
  return xsputn(&ch, 1) == 1 ? c : traits_type::eof();
}

std::streamsize PrintableStreambuf::xsputn(const char* s, std::streamsize n) {
  const std::string text =
      models::scenario::printable(std::string_view(s, static_cast<std::size_t>(n)));
  const auto size = static_cast<std::streamsize>(text.size());
  return target_->sputn(text.data(), size) == size ? n : 0;
}

int PrintableStreambuf::sync() { return target_->pubsync(); }

}  // namespace myriad::cli
