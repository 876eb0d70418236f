// Gzip-compressed input (RFC 1952), decompressed as it streams: PyTorch's
// profiler writes its traces as *.pt.trace.json.gz (export_chrome_trace given a
// .gz name, tensorboard_trace_handler(use_gzip=True)). Gzip is recognised by its
// magic bytes, not by the file's name, and the decompressed bytes are held to
// the same cap as an uncompressed input's (import.hpp): a small file that
// expands past it (a "gzip bomb") is refused, with the cap, after reading no
// more than the cap's worth. Memory: two blocks and zlib's 32 KiB window.
#pragma once

#include <cstdint>
#include <memory>
#include <streambuf>
#include <string>
#include <string_view>

namespace myriad::calibration {

// Whether `head`, the first bytes of an input, starts with gzip's magic 1f 8b.
bool is_gzip(std::string_view head);

// The decompressed bytes of the gzip stream `source` holds: one member or
// several one after the other (as `cat a.gz b.gz` makes them). Reading throws
// std::runtime_error "PATH: cannot read WHAT: WHY" past `cap` bytes
// decompressed, for a corrupt stream, for one cut short, and for bytes after it
// that are not another member.
class GzipInput : public std::streambuf {
 public:
  GzipInput(std::streambuf& source, std::uint64_t cap, std::string path, std::string what);
  ~GzipInput() override;
  GzipInput(const GzipInput&) = delete;
  GzipInput& operator=(const GzipInput&) = delete;

  // The bytes decompressed so far.
  [[nodiscard]] std::uint64_t total() const { return total_; }

 protected:
  int_type underflow() override;

 private:
  [[noreturn]] void fail(const std::string& why) const;

  struct State;  // zlib's stream and the two blocks
  std::unique_ptr<State> state_;
  std::streambuf& source_;
  std::uint64_t cap_;
  std::string path_;
  std::string what_;
  std::uint64_t total_ = 0;
};

// Reads the gzip stream in `source` to its end, keeping nothing, and returns
// its decompressed size; throws as GzipInput does, past `cap` at once.
std::uint64_t gzip_size(std::streambuf& source, std::uint64_t cap, const std::string& path,
                        const std::string& what);

}  // namespace myriad::calibration
