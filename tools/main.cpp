// The `myriad` command. The only place that reads the process environment.
#include <unistd.h>

#include <cstdlib>
#include <exception>
#include <iostream>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include "models/scenario/interrupt.hpp"
#include "myriad_source_paths.hpp"
#include "tools/cli/cli.hpp"

#ifdef MYRIAD_HAVE_MPI
#include <mpi.h>

#include <sstream>

namespace {

// Launched by mpirun or srun: the launcher's environment says so. A plain run
// stays out of MPI (no daemon to start, nothing printed by the library).
bool launched_by_mpi() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "SLURM_STEP_ID"}) {
    if (std::getenv(name) != nullptr) return true;
  }
  return false;
}

std::vector<std::string> gather_to_root(const std::string& text, int rank, int size) {
  const int length = static_cast<int>(text.size());
  std::vector<int> lengths(static_cast<std::size_t>(size));
  MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::vector<int> offsets(static_cast<std::size_t>(size), 0);
  std::string all;
  if (rank == 0) {
    int total = 0;
    for (int r = 0; r < size; ++r) {
      offsets[static_cast<std::size_t>(r)] = total;
      total += lengths[static_cast<std::size_t>(r)];
    }
    all.resize(static_cast<std::size_t>(total));
  }
  MPI_Gatherv(text.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR,
              0, MPI_COMM_WORLD);
  std::vector<std::string> out;
  if (rank == 0) {
    for (int r = 0; r < size; ++r) {
      out.push_back(all.substr(static_cast<std::size_t>(offsets[static_cast<std::size_t>(r)]),
                               static_cast<std::size_t>(lengths[static_cast<std::size_t>(r)])));
    }
  }
  return out;
}

}  // namespace
#endif

int main(int argc, char** argv) {
  myriad::models::scenario::install_terminate_handler();
  // SIGINT, SIGTERM, SIGHUP: files half written removed, children ended.
  myriad::models::scenario::install_interrupt_cleanup();
  myriad::cli::Environment env;
  if (const char* path = std::getenv("MYRIAD_PRESET_PATH"); path != nullptr) {
    std::string list = path;
    std::size_t start = 0;
    while (start <= list.size()) {
      const std::size_t end = std::min(list.find(':', start), list.size());
      if (end > start) env.preset_path.emplace_back(list.substr(start, end - start));
      start = end + 1;
    }
  }
  env.preset_path.emplace_back(MYRIAD_SCENARIO_DIR);
  env.profile_dir = MYRIAD_PROFILE_DIR;
  env.validation_dir = std::string(MYRIAD_SCENARIO_DIR) + "/validation";
  env.report_dir = MYRIAD_REPORT_DIR;
  env.in = &std::cin;
  env.terminal = isatty(STDERR_FILENO) != 0;
  const std::vector<std::string> args(argv + 1, argv + argc);
#ifdef MYRIAD_HAVE_MPI
  if (launched_by_mpi()) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &env.world.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &env.world.size);
    const int rank = env.world.rank;
    const int size = env.world.size;
    env.world.gather = [rank, size](const std::string& text) {
      return gather_to_root(text, rank, size);
    };
    // Every rank reads the same input and meets the same problems: rank 0 says
    // them once. The exit code is the worst of the ranks'.
    std::ostringstream quiet_out;
    std::ostringstream quiet_err;
    const int code = rank == 0 ? myriad::cli::run(args, std::cout, std::cerr, env)
                               : myriad::cli::run(args, quiet_out, quiet_err, env);
    int worst = 0;
    MPI_Allreduce(&code, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    int first = code;
    MPI_Bcast(&first, 1, MPI_INT, 0, MPI_COMM_WORLD);
    // A rank that failed where rank 0 did not has its own reason to give.
    if (rank != 0 && code != 0 && first == 0) std::cerr << quiet_err.str();
    MPI_Finalize();
    return worst;
  }
#endif
  return myriad::cli::run(args, std::cout, std::cerr, env);
}
