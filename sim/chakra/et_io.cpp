#include "sim/chakra/et_io.hpp"

#include <climits>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <istream>
#include <ostream>
#include <string>
#include <string_view>

#include <zlib.h>

#include "sim/chakra/et_dependencies.hpp"
#include "sim/chakra/et_proto.hpp"

namespace myriad::sim::chakra {

namespace {

// A varint of a 64-bit value takes at most 10 bytes.
constexpr std::size_t kMaxVarintBytes = 10;

// Walks a file's length-delimited messages.
class Frames {
 public:
  Frames(std::string_view bytes, const std::string& file) : bytes_(bytes), file_(file) {}

  [[nodiscard]] bool at_end() const { return pos_ == bytes_.size(); }
  [[nodiscard]] std::size_t offset() const { return pos_; }

  // The next message's bytes; `what` names it in errors ("node 12").
  std::string_view next(const std::string& what) {
    const std::size_t start = pos_;
    std::uint64_t size = 0;
    for (std::size_t i = 0;; ++i) {
      if (pos_ == bytes_.size()) {
        fail(start, what + ": the size prefix is cut off by the end of the file");
      }
      const auto byte = static_cast<std::uint8_t>(bytes_[pos_++]);
      // The tenth byte holds bit 63 alone, and ends the varint.
      if (i == kMaxVarintBytes - 1 && byte > 1) {
        fail(start, what + ": malformed size prefix (over 64 bits)");
      }
      size |= static_cast<std::uint64_t>(byte & 0x7fU) << (7 * i);
      if ((byte & 0x80U) == 0) break;
    }
    const std::size_t remaining = bytes_.size() - pos_;
    if (size > remaining) {
      fail(start, what + ": the size prefix says " + std::to_string(size) + " bytes, but " +
                      std::to_string(remaining) + " remain (a truncated file?)");
    }
    if (size > static_cast<std::uint64_t>(INT_MAX)) {
      fail(start,
           what + ": " + std::to_string(size) + " bytes, over protobuf's 2 GiB message limit");
    }
    const std::string_view message = bytes_.substr(pos_, static_cast<std::size_t>(size));
    pos_ += static_cast<std::size_t>(size);
    return message;
  }

  [[noreturn]] void fail(std::size_t at, const std::string& what) const {
    throw EtError(file_ + ": byte " + std::to_string(at) + ": " + what);
  }

 private:
  std::string_view bytes_;
  const std::string& file_;
  std::size_t pos_ = 0;
};

template <typename Message>
void parse(Message& message, std::string_view bytes, const Frames& frames, std::size_t at,
           const std::string& what) {
  if (!message.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    frames.fail(at, what + ": the " + std::to_string(bytes.size()) + " bytes do not parse as a " +
                        message.GetDescriptor()->full_name() + " message");
  }
}

void write_message(const google::protobuf::Message& message, std::ostream& out,
                   const std::string& file) {
  std::string bytes;
  if (!message.SerializeToString(&bytes)) {
    throw EtError(file + ": protobuf could not serialize a " +
                  message.GetDescriptor()->full_name() + " message");
  }
  std::string prefix;
  append_varint(prefix, bytes.size());
  out.write(prefix.data(), static_cast<std::streamsize>(prefix.size()));
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace

void append_varint(std::string& out, std::uint64_t value) {
  while (value >= 0x80U) {
    out.push_back(static_cast<char>((value & 0x7fU) | 0x80U));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

void write_et(const EtGraph& graph, std::ostream& out, const std::string& file,
              const EtGraphChecks& checks) {
  check_et_graph(graph, file, checks);
  ChakraProtoMsg::GlobalMetadata metadata;
  metadata_to_proto(graph, metadata);
  write_message(metadata, out, file);
  ChakraProtoMsg::Node node;
  for (const EtNode& n : graph.nodes) {
    node.Clear();
    node_to_proto(n, node);
    write_message(node, out, file);
  }
  out.flush();
  if (!out) throw EtError(file + ": write failed");
}

void write_et_file(const EtGraph& graph, const std::filesystem::path& path,
                   const EtGraphChecks& checks) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw EtError(path.string() + ": cannot open for writing");
  write_et(graph, out, path.string(), checks);
}

namespace {

// A gzip-compressed trace (Chakra's tools and samples write .et.gz) inflated,
// under the same bound as a plain one.
std::string gunzipped(std::string_view bytes, const std::string& file, std::size_t max_bytes) {
  z_stream z{};
  if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) throw EtError(file + ": gzip: cannot start zlib");
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  z.avail_in = static_cast<uInt>(bytes.size());
  std::string out;
  std::string chunk(std::size_t{1} << 20, '\0');
  int rc = Z_OK;
  while (rc == Z_OK) {
    z.next_out = reinterpret_cast<Bytef*>(chunk.data());
    z.avail_out = static_cast<uInt>(chunk.size());
    rc = inflate(&z, Z_NO_FLUSH);
    out.append(chunk.data(), chunk.size() - z.avail_out);
    if (out.size() > max_bytes) {
      inflateEnd(&z);
      throw EtError(file + ": inflated, over the " + std::to_string(max_bytes) +
                    " bytes a trace may have (EtReadOptions::max_bytes)");
    }
  }
  inflateEnd(&z);
  if (rc != Z_STREAM_END) {
    throw EtError(file + ": gzip: " + (z.msg != nullptr ? z.msg : "truncated or damaged"));
  }
  return out;
}

}  // namespace

EtGraph read_et_bytes(std::string_view bytes, const std::string& file,
                      const EtReadOptions& options) {
  if (bytes.size() >= 2 && bytes[0] == '\x1f' && bytes[1] == '\x8b') {
    return read_et_bytes(gunzipped(bytes, file, options.max_bytes), file, options);
  }
  if (bytes.size() > options.max_bytes) {
    throw EtError(file + ": " + std::to_string(bytes.size()) + " bytes, over the " +
                  std::to_string(options.max_bytes) +
                  " a trace may have (EtReadOptions::max_bytes)");
  }
  if (bytes.empty()) {
    throw EtError(file + ": empty: a Chakra trace starts with its GlobalMetadata message");
  }
  Frames frames(bytes, file);
  EtGraph graph;
  {
    ChakraProtoMsg::GlobalMetadata metadata;
    parse(metadata, frames.next("global metadata"), frames, 0, "global metadata");
    metadata_from_proto(metadata, graph, file + ": global metadata");
  }
  ChakraProtoMsg::Node node;
  while (!frames.at_end()) {
    const std::size_t index = graph.nodes.size();
    const std::string what = "node " + std::to_string(index);
    if (index >= options.max_nodes) {
      frames.fail(frames.offset(), what + ": more than " + std::to_string(options.max_nodes) +
                                       " nodes (EtReadOptions::max_nodes)");
    }
    const std::size_t at = frames.offset();
    const std::string_view message = frames.next(what);
    node.Clear();
    parse(node, message, frames, at, what);
    graph.nodes.push_back(node_from_proto(node, node_where(file, index, node.id())));
  }
  check_et_graph(graph, file, options.checks);
  return graph;
}

EtGraph read_et(std::istream& in, const std::string& file, const EtReadOptions& options) {
  std::string bytes;
  constexpr std::size_t kChunk = std::size_t{1} << 20;
  std::string chunk(kChunk, '\0');
  while (in) {
    in.read(chunk.data(), static_cast<std::streamsize>(kChunk));
    const auto got = static_cast<std::size_t>(in.gcount());
    if (bytes.size() + got > options.max_bytes) {
      throw EtError(file + ": over the " + std::to_string(options.max_bytes) +
                    " bytes a trace may have (EtReadOptions::max_bytes)");
    }
    bytes.append(chunk.data(), got);
  }
  if (in.bad()) throw EtError(file + ": read failed");
  return read_et_bytes(bytes, file, options);
}

EtGraph read_et_file(const std::filesystem::path& path, const EtReadOptions& options) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw EtError(path.string() + ": cannot open for reading");
  return read_et(in, path.string(), options);
}

}  // namespace myriad::sim::chakra
