#include "models/place/sct_lp.hpp"

#include <algorithm>
#include <limits>
#include <memory>
#include <numeric>

#ifdef MYRIAD_HAVE_GLPK
#include <glpk.h>
#endif

namespace myriad::models::place {
namespace {

// Takes the edges whose key is below `below`, smallest key first (lower edge
// index on ties), each when its parent has no favourite child yet and its child
// no favourite parent. For the LP's rounding this only guards against x values a
// rounding error below 0.5 on two edges of one op; for the greedy rule it is the
// rule.
FavouriteChildren match(const OpGraph& g, const std::vector<double>& key, double below) {
  std::vector<int> order(g.edges.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return key[a] < key[b]; });
  FavouriteChildren f;
  f.child.assign(g.nodes.size(), -1);
  std::vector<bool> has_parent(g.nodes.size(), false);
  for (int e : order) {
    if (!(key[e] < below)) break;
    const OpEdge& edge = g.edges[e];
    if (f.child[edge.from] >= 0 || has_parent[edge.to]) continue;
    f.child[edge.from] = edge.to;
    has_parent[edge.to] = true;
  }
  return f;
}

#ifdef MYRIAD_HAVE_GLPK

// The program's matrix, in GLPK's 1-based triplets, built row by row.
class Rows {
 public:
  explicit Rows(glp_prob* lp) : lp_(lp) {
    ia_.push_back(0);  // GLPK ignores element 0
    ja_.push_back(0);
    ar_.push_back(0);
  }
  // Adds the row sum(coef * column) >= lower.
  void at_least(double lower, const std::vector<std::pair<int, double>>& terms) {
    const int row = glp_add_rows(lp_, 1);
    glp_set_row_bnds(lp_, row, GLP_LO, lower, 0);
    for (const auto& [column, coef] : terms) {
      ia_.push_back(row);
      ja_.push_back(column);
      ar_.push_back(coef);
    }
  }
  void load() {
    glp_load_matrix(lp_, static_cast<int>(ar_.size()) - 1, ia_.data(), ja_.data(), ar_.data());
  }

 private:
  glp_prob* lp_;
  std::vector<int> ia_, ja_;
  std::vector<double> ar_;
};

// Times are divided by the largest compute or transfer time, so that the
// simplex works on numbers near 1 whatever the graph's units.
double time_unit(const OpGraph& g, const Devices& d) {
  double unit = 0;
  for (const OpNode& op : g.nodes) unit = std::max(unit, op.compute_s);
  for (const OpEdge& e : g.edges) unit = std::max(unit, d.transfer_s(e.bytes));
  return unit > 0 ? unit : 1;
}

// Columns: x_e at 1 + e, s_v at 1 + E + v, w last.
void build(glp_prob* lp, const OpGraph& g, const Devices& d) {
  const int n = static_cast<int>(g.nodes.size());
  const int m = static_cast<int>(g.edges.size());
  const auto x = [](int e) { return 1 + e; };
  const auto s = [m](int v) { return 1 + m + v; };
  const int w = 1 + m + n;
  const double unit = time_unit(g, d);
  glp_set_obj_dir(lp, GLP_MIN);
  glp_add_cols(lp, m + n + 1);
  for (int e = 0; e < m; ++e) glp_set_col_bnds(lp, x(e), GLP_DB, 0, 1);
  for (int v = 0; v < n; ++v) glp_set_col_bnds(lp, s(v), GLP_LO, 0, 0);
  glp_set_col_bnds(lp, w, GLP_LO, 0, 0);
  glp_set_obj_coef(lp, w, 1);

  Rows rows(lp);
  const Adjacency adj = adjacency(g);
  for (int v = 0; v < n; ++v) {
    // sum (1 - x) <= 1 is sum x >= degree - 1; it binds only from degree 2 on.
    for (const std::vector<int>* edges : {&adj.out[v], &adj.in[v]}) {
      if (edges->size() < 2) continue;
      std::vector<std::pair<int, double>> terms;
      for (int e : *edges) terms.emplace_back(x(e), 1.0);
      rows.at_least(static_cast<double>(edges->size()) - 1, terms);
    }
    // w >= s + p is implied through a child's start for every op that has one.
    if (adj.out[v].empty()) rows.at_least(g.nodes[v].compute_s / unit, {{w, 1.0}, {s(v), -1.0}});
  }
  for (int e = 0; e < m; ++e) {
    const OpEdge& edge = g.edges[e];
    rows.at_least(
        g.nodes[edge.from].compute_s / unit,
        {{s(edge.to), 1.0}, {s(edge.from), -1.0}, {x(e), -d.transfer_s(edge.bytes) / unit}});
  }
  rows.load();
}

#endif  // MYRIAD_HAVE_GLPK

}  // namespace

#ifdef MYRIAD_HAVE_GLPK

bool sct_lp_available() { return true; }

std::optional<FavouriteChildren> sct_favourite_children(const OpGraph& g, const Devices& d) {
  const std::unique_ptr<glp_prob, decltype(&glp_delete_prob)> lp(glp_create_prob(),
                                                                 &glp_delete_prob);
  build(lp.get(), g, d);
  glp_smcp parm;
  glp_init_smcp(&parm);
  parm.msg_lev = GLP_MSG_OFF;
  parm.presolve = GLP_ON;
  parm.meth = GLP_DUALP;  // twice as fast as the primal simplex on these programs
  if (glp_simplex(lp.get(), &parm) != 0 || glp_get_status(lp.get()) != GLP_OPT) return std::nullopt;
  std::vector<double> x(g.edges.size());
  for (int e = 0; e < static_cast<int>(x.size()); ++e) x[e] = glp_get_col_prim(lp.get(), 1 + e);
  FavouriteChildren f = match(g, x, 0.5);
  f.variables = glp_get_num_cols(lp.get());
  f.constraints = glp_get_num_rows(lp.get());
  return f;
}

#else

bool sct_lp_available() { return false; }

std::optional<FavouriteChildren> sct_favourite_children(const OpGraph&, const Devices&) {
  return std::nullopt;
}

#endif  // MYRIAD_HAVE_GLPK

FavouriteChildren largest_edge_favourite_children(const OpGraph& g) {
  std::vector<double> key(g.edges.size());
  for (std::size_t e = 0; e < key.size(); ++e) key[e] = -g.edges[e].bytes;
  return match(g, key, std::numeric_limits<double>::infinity());
}

}  // namespace myriad::models::place
