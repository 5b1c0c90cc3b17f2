#pragma once
// Identical work once, at the level of the max-min solver. A cluster of identical servers on a
// symmetric fabric declares the same pattern of link uses thousands of times: rail r's NIC link
// in server k carries exactly the composite flows that rail r's NIC link carries in every other
// server. Each such link is one constraint of SimGrid's max-min system (sum of the rates of the
// flows crossing it, times how often each crosses it, <= capacity), and SimGrid's cost of
// starting a flow grows with the square of the constraints it crosses.
//
// Two constraints crossed by the same flows the same number of times have the same left-hand
// side; only the one with the smaller capacity can ever bind, whatever subset of those flows is
// active (max-min fairness saturates the smaller first and freezes all of its flows, which are
// all of the other's). Dropping the other is exact: every rate, at every instant, is unchanged.
// Where symmetry breaks (a faster or slower link, a failed one, uneven placement, another flow
// crossing one copy) the signatures differ and both constraints stay: the reduction falls back
// to the full system by itself.
#include <vector>

#include "routing/route_table.hpp"

namespace topsim {

/// Of the constraints `routes` cross (each route lists its keys in crossing order, repeats
/// meaning it crosses one twice), which to give the solver: true for one constraint, of least
/// capacity (then lowest key), per distinct set of (route, times crossed); always true where
/// `pinned` says so (constraints other, undeclared flows may cross); false where no route
/// crosses. `capacity_Bps` and `pinned` are indexed by key; their size bounds the keys.
std::vector<bool> distinct_constraints(const std::vector<std::vector<ConstraintKey>>& routes,
                                       const std::vector<double>& capacity_Bps, const std::vector<bool>& pinned);

}  // namespace topsim
