#include "calibration/import/gzip_input.hpp"

#include <fmt/format.h>
#include <zlib.h>

#include <array>
#include <stdexcept>

#include "calibration/import/import.hpp"
#include "models/scenario/text_file.hpp"

namespace myriad::calibration {
namespace {

constexpr std::size_t kBlock = std::size_t{1} << 16;

Bytef* bytes(char* p) { return reinterpret_cast<Bytef*>(p); }

}  // namespace

struct GzipInput::State {
  z_stream z{};
  std::array<char, kBlock> in{};
  std::array<char, kBlock> out{};
  bool member_done = false;   // inflate reached the end of a member
  bool after_member = false;  // the member being read follows another
};

bool is_gzip(std::string_view head) {
  return head.size() >= 2 && static_cast<unsigned char>(head[0]) == 0x1f &&
         static_cast<unsigned char>(head[1]) == 0x8b;
}

GzipInput::GzipInput(std::streambuf& source, std::uint64_t cap, std::string path, std::string what)
    : state_(std::make_unique<State>()),
      source_(source),
      cap_(cap),
      path_(std::move(path)),
      what_(std::move(what)) {
  // 15 + 16: the largest window, a gzip header and trailer (not zlib's).
  if (inflateInit2(&state_->z, 15 + 16) != Z_OK) fail("zlib could not start");
}

GzipInput::~GzipInput() { inflateEnd(&state_->z); }

void GzipInput::fail(const std::string& why) const {
  throw std::runtime_error(
      fmt::format("{}: cannot read {}: {}", models::scenario::printable(path_), what_, why));
}

GzipInput::int_type GzipInput::underflow() {
  if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
  State& s = *state_;
  s.z.next_out = bytes(s.out.data());
  s.z.avail_out = static_cast<uInt>(kBlock);
  while (s.z.avail_out == kBlock) {
    if (s.z.avail_in == 0) {
      const std::streamsize n = source_.sgetn(s.in.data(), static_cast<std::streamsize>(kBlock));
      if (n <= 0) {
        if (s.member_done) return traits_type::eof();
        fail("the gzip stream stops before its end: the file is cut short");
      }
      s.z.next_in = bytes(s.in.data());
      s.z.avail_in = static_cast<uInt>(n);
    }
    if (s.member_done) {  // more bytes: another member must start here
      if (inflateReset(&s.z) != Z_OK) fail("zlib could not start");
      s.member_done = false;
      s.after_member = true;
    }
    const int rc = inflate(&s.z, Z_NO_FLUSH);
    if (rc == Z_STREAM_END) {
      s.member_done = true;
    } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
      fail(s.after_member ? std::string("bytes after the end of the gzip stream that are not "
                                        "another gzip member")
                          : fmt::format("not a valid gzip stream ({})",
                                        s.z.msg != nullptr ? s.z.msg : "corrupt data"));
    }
  }
  const std::size_t produced = kBlock - s.z.avail_out;
  total_ += produced;
  if (total_ > cap_) {
    fail(fmt::format("more than the {} cap for {} once decompressed (--max-input-size raises it)",
                     size_text(cap_), what_));
  }
  setg(s.out.data(), s.out.data(), s.out.data() + produced);
  return traits_type::to_int_type(*gptr());
}

std::uint64_t gzip_size(std::streambuf& source, std::uint64_t cap, const std::string& path,
                        const std::string& what) {
  GzipInput in(source, cap, path, what);
  std::array<char, kBlock> scratch{};
  while (in.sgetn(scratch.data(), static_cast<std::streamsize>(scratch.size())) > 0) {
  }
  return in.total();
}

}  // namespace myriad::calibration
