// Collectives as real message exchange between GPU hosts in SimGrid.
//
// Sizes follow the nccl-tests conventions: `bytes` is the all-reduce buffer,
// the all-gather output, the reduce-scatter input, or the message of a
// send/recv. Rings are NCCL-style: members are ordered node by node (NVLink
// ring order inside a node) and, when a group has several members per node
// on more than one node, one ring (channel) per local member, each entering
// and leaving every node through a different GPU and so a different NIC.
#pragma once

#include <string>
#include <vector>

#include "sim/model_params.h"
#include "sim/platform.h"

namespace trainsim::sim {

// kAllToAll: every member sends bytes / n to each member (expert parallelism's token
// dispatch and combine; NCCL runs it as n - 1 concurrent sends and receives).
enum class CollKind { kAllReduce, kReduceScatter, kAllGather, kSendRecv, kAllToAll };
enum class CollAlgo { kRing, kTree, kHierarchical, kParameterServer, kNvls };

const char* ToString(CollKind k);
const char* ToString(CollAlgo a);

struct CollectiveCall {
  CollKind kind = CollKind::kAllReduce;
  CollAlgo algo = CollAlgo::kRing;
  double bytes = 0;
  // Endpoints (Platform numbering): GPU ranks, for send/recv {sender,
  // receiver}, either of which may be a node's host.
  std::vector<int> group;
  std::string tag;     // unique per group; messages of one group use it
  int max_chunks = 0;  // tree: simulate only this many chunks (0 = all)
  // kParameterServer: the server endpoints (hosts); each holds an equal
  // share of the buffer. Member 0 starts the servers' actors.
  std::vector<int> servers = {};
  // A folded collective (docs/model.md section 4, "The fold"): `group` is a
  // part of the real group, which has `members` members on `nodes` nodes (0:
  // the group's own). Rings run the real group's chunk and steps on the part;
  // trees are measured on the part and its first half and extended in depth
  // (MeasureConcurrent); the protocol latency is the real group's.
  int members = 0;
  int nodes = 0;
};

// The real group's member count and node count of `call`.
int MembersOf(const CollectiveCall& call);
int NodesOf(const Platform& platform, const CollectiveCall& call);

// The calling actor's part of `call`, as member `me` of call.group: the
// protocol latency (ProtocolLatency), then the algorithm's messages. Blocks
// until this member is done. Must run inside a SimGrid actor.
void RunCollectiveMember(const Platform& platform, const ModelParams& params,
                         const CollectiveCall& call, int me);

// Runs all `calls` concurrently (one actor per member of each), to the end,
// and returns the simulated time they took. Call from outside any actor
// (it runs the engine). Folded tree and hierarchical all-reduces (members >
// group size) take the time of the part plus, per level the real tree is
// deeper, the time the part's tree gained over its first half's.
double MeasureConcurrent(const Platform& platform, const ModelParams& params,
                         const std::vector<CollectiveCall>& calls);

// Whether an all-reduce over `group` runs as NVLink SHARP: its members are on
// one node of an NVLS platform (Platform::nvls_traffic_scale), more than one.
bool NvlsApplies(const Platform& platform, CollKind kind, const std::vector<int>& group);

// The algorithm of a tensor-parallel collective: NVLS where it applies and moves
// its bytes faster than the ring (larger groups), else the ring.
CollAlgo TpAlgo(const Platform& platform, CollKind kind, const std::vector<int>& group);

// Like NCCL's algorithm choice: runs `calls` (concurrent groups of one
// collective) once per algorithm that applies -- for all-reduce the ring, the
// hierarchical algorithm when the group has several members on a node and
// spans nodes, the tree up to params.tree_max_bytes, and NVLS where it
// applies; ring otherwise -- and
// returns the fastest time, its algorithm in *chosen (the first on a tie).
// Call from outside any actor.
double MeasureFastest(const Platform& platform, const ModelParams& params,
                      std::vector<CollectiveCall> calls, CollAlgo* chosen);

// NCCL's protocol latency of `call` (ModelParams::protocol_*): zero for
// send/recv and groups of one.
double ProtocolLatency(const Platform& platform, const ModelParams& params,
                       const CollectiveCall& call);

// NCCL-style ring orders for a group: one order per channel (see above).
std::vector<std::vector<int>> RingChannels(const Platform& platform, const std::vector<int>& group);

}  // namespace trainsim::sim
