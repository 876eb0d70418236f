// Favourite children for m-SCT. Hanen and Munier ("An approximation algorithm
// for scheduling dependent tasks on m processors with small communication
// delays", 1995) relax the choice of which child runs right after its parent on
// the parent's processor into a linear program, over x_e in [0, 1] per edge
// e = (i, j), x_e = 0 meaning j is i's favourite:
//
//   minimise w
//   subject to  sum over e out of i of (1 - x_e) <= 1     at most one favourite child
//               sum over e into j of (1 - x_e) <= 1       at most one favourite parent
//               s_j >= s_i + p_i + c_e x_e                for every edge e = (i, j)
//               w   >= s_i + p_i                          for every op i
//               s_i >= 0
//
// with p_i the op's compute time and c_e = Devices::transfer_s(bytes). An edge
// becomes favourite when its x rounds to 0 (x < 0.5).
//
// GLPK solves it when the build defines MYRIAD_HAVE_GLPK; otherwise there is no
// solver and sct_favourite_children returns std::nullopt.
#pragma once

#include <optional>
#include <vector>

#include "models/place/op_graph.hpp"
#include "models/place/placer.hpp"

namespace myriad::models::place {

struct FavouriteChildren {
  std::vector<int> child;  // per op: the favourite child's index, or -1
  int variables = 0;       // the linear program's columns (0 for the greedy rule)
  int constraints = 0;     // and rows
};

// Whether this build has GLPK, and so can solve the linear program.
bool sct_lp_available();

// The favourites from the relaxation. std::nullopt without GLPK or when GLPK
// reports no optimum. The graph must be valid. Every op has at most one favourite
// child and at most one favourite parent.
std::optional<FavouriteChildren> sct_favourite_children(const OpGraph& g, const Devices& d);

// The greedy rule used without the program: edges in decreasing bytes (lower edge
// index on ties), each becoming favourite when its parent has no favourite child
// yet and its child no favourite parent. So an op's favourite is its child with
// the largest edge, unless a heavier edge from another op claimed that child.
FavouriteChildren largest_edge_favourite_children(const OpGraph& g);

}  // namespace myriad::models::place
