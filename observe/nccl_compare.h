// nccl-tests output beside the simulator's collectives, and the network refitted
// from it (docs/observe.md section 3b).
#pragma once

#include <optional>
#include <vector>

#include "core/hardware_profile.h"
#include "core/instance_type.h"
#include "observe/nccl_tests.h"
#include "sim/collectives.h"
#include "sim/model_params.h"

namespace trainsim::observe {

// Rows at least this large fit the network: there the bandwidth, not the latency, sets the
// time (the catalog's network efficiencies were fitted on the same rows, validation.md).
inline constexpr double kNetworkFitMinBytes = 128.0 * 1024 * 1024;

// The simulator's collective of an nccl-tests test (all_reduce, all_gather, reduce_scatter,
// alltoall); the others are refused, naming `file`.
Expected<sim::CollKind> SimulatedKind(NcclOp op, const std::string& file);

struct ComparedRow {
  double bytes = 0;
  double measured_busbw_GBps = 0, simulated_busbw_GBps = 0;
  std::optional<double> error;  // simulated / measured - 1; none where busbw prints as 0.00
};

// Every row of `run` simulated on `type` (the instance the run used; its GPUs per node
// from the run's ranks and nodes). Refuses a run that cannot be of that type: another GPU
// (the device name lacks the catalog GPU's family), more ranks per node than it has GPUs,
// ranks not spread evenly, or a test the simulator does not model (sendrecv, broadcast,
// reduce).
Expected<std::vector<ComparedRow>> CompareNccl(const NcclTestsRun& run, const InstanceType& type,
                                               const sim::ModelParams& params);

// The mean absolute error over the rows of at least kNetworkFitMinBytes (0 rows: nullopt).
std::optional<double> MeanFitError(const std::vector<ComparedRow>& rows);

// The network efficiency of `type` that makes the simulated bus bandwidth of the runs'
// rows of at least kNetworkFitMinBytes closest to the measured (least mean absolute
// relative error, golden-section search on [0.05, 1]). Needs a run over 2 or more nodes.
Expected<NetworkFit> RefitNetwork(const std::vector<NcclTestsRun>& runs, const InstanceType& type,
                                  const sim::ModelParams& params);

// A hardware profile that carries `fit` as its network: `base` (a calibration's profile, read
// from `base_path`) with its network replaced, or without one a new profile whose provenance
// names these nccl-tests runs. Fails when `base` measured another GPU than `type`'s.
Expected<HardwareProfile> ProfileWithNetwork(const HardwareProfile* base,
                                             const std::string& base_path,
                                             const std::vector<NcclTestsRun>& runs,
                                             const InstanceType& type, const NetworkFit& fit);

}  // namespace trainsim::observe
