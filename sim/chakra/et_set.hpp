// A job's traces: one Chakra ET file per rank, `<name>.<rank>.et`, as ASTRA-sim
// reads them, and a manifest beside them, `<name>.et.json`, that lists the files
// and the ranks each stands for:
//
//   {"format": "myriad-chakra-et-set", "version": 1, "name": "step", "ranks": 4,
//    "files": [{"file": "step.0.et", "ranks": [0, 2]}, {"file": "step.1.et", "ranks": [1, 3]}]}
//
// A file may stand for a class of ranks whose traces are alike (the step engine
// plays one replica per class); it is named after the class's first rank. With one
// rank per file the set is what ASTRA-sim takes as is.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "sim/chakra/et_graph.hpp"
#include "sim/chakra/et_io.hpp"

namespace myriad::sim::chakra {

struct EtRankFile {
  std::vector<int> ranks;  // ascending; the file is named after the first
  EtGraph graph;
  std::string file;  // the file's name in the set's folder (set by the reader)

  bool operator==(const EtRankFile&) const = default;
};

struct EtSet {
  std::string name;
  int ranks = 0;                  // the job's ranks, 0 .. ranks - 1
  std::vector<EtRankFile> files;  // together they cover every rank once

  bool operator==(const EtSet&) const = default;
};

// The manifest's name for a set: "<name>.et.json".
std::string et_manifest_name(const std::string& name);

// Writes rank r's graph to `<dir>/<name>.<r>.et` and the manifest; returns the
// manifest's path. `dir` is created when missing. Throws EtError on a name that is
// not a plain file name, a graph that cannot be written, or a file that cannot be.
std::filesystem::path write_et_set(const std::filesystem::path& dir, const std::string& name,
                                   const std::vector<EtGraph>& per_rank,
                                   const EtGraphChecks& checks = {});
// The same for files that stand for classes of ranks: `set.files[i].file` is
// ignored (each is named after its first rank); the classes must cover 0 ..
// set.ranks - 1, each rank once.
std::filesystem::path write_et_set(const std::filesystem::path& dir, const EtSet& set,
                                   const EtGraphChecks& checks = {});

// Reads a set from its manifest (a .json file), from a folder (its one manifest, or
// without one, `<name>.<rank>.et` files of one name for ranks 0 .. n-1), or from
// one .et file (a set of one; its rank from its name `<name>.<rank>.et`, else 0).
// Throws EtError naming the manifest or the trace and what is wrong: unknown or
// missing keys, ranks missing or given twice, a file named with a folder, a
// missing file, and every error of read_et.
EtSet read_et_set(const std::filesystem::path& path, const EtReadOptions& options = {});

}  // namespace myriad::sim::chakra
