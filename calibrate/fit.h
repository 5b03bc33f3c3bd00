// Fitting measured points into the tables a hardware profile carries.
#pragma once

#include <string>
#include <vector>

#include "calibrate/measure.h"
#include "core/hardware_profile.h"

namespace trainsim::calibrate {

// The GEMM throughput table of one dtype: verified points, ascending in FLOPs;
// points within 1% of each other's FLOPs are merged (mean FLOP/s). Empty when
// no verified point of that dtype exists.
std::vector<TablePoint> FitGemmTable(const std::vector<GemmPoint>& points,
                                     const std::string& dtype);

// Leave-one-out error of a GEMM table: for each verified point whose FLOPs
// lie strictly inside the others' range, the relative error of the table
// built without it. The largest such error (0 when there are fewer than 3).
double GemmTableError(const std::vector<GemmPoint>& points, const std::string& dtype);

// Size ranges the collective fits split at (bytes): every factor of 16 from
// 4 KiB to 256 MiB, so that protocol changes (NCCL's LL / LL128 / Simple) and
// cache sizes (the cpu backend) fall between ranges, not inside one.
const std::vector<double>& CollectiveRangeBounds();

// Fits time = latency + bytes / algbw on each size range to the points of one
// (op, ranks, nodes), minimising the relative error; latency >= 0. A range
// with fewer than 2 points joins its neighbour. Points need not be sorted.
CollectiveFit FitCollective(const std::vector<CollectivePoint>& points);

}  // namespace trainsim::calibrate
