#include "sim/collectives.h"

#include <algorithm>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <simgrid/s4u.hpp>

namespace sg4 = simgrid::s4u;

namespace trainsim::sim {
namespace {

int kPayload = 0;  // messages carry no data; only their size matters

sg4::Mailbox* Box(const std::string& tag, const std::string& what, int to) {
  return sg4::Mailbox::by_name(tag + "/" + what + "/" + std::to_string(to));
}

// `steps` ring steps: each member sends `chunk` bytes to its successor and
// receives as much from its predecessor, in every channel at once.
void RingSteps(const std::vector<std::vector<int>>& channels, const std::vector<int>& position,
               int me_rank, const std::string& tag, int steps, double chunk, int max_steps) {
  const int n = static_cast<int>(channels[0].size());
  std::vector<sg4::Mailbox*> out, in;
  for (std::size_t c = 0; c < channels.size(); ++c) {
    int pos = position[c];
    int next = channels[c][(pos + 1) % n];
    out.push_back(Box(tag, "c" + std::to_string(c), next));
    in.push_back(Box(tag, "c" + std::to_string(c), me_rank));
  }
  auto step = [&]() {
    std::vector<sg4::CommPtr> sends;
    std::vector<int*> received(in.size(), nullptr);
    for (auto* box : out) sends.push_back(box->put_async(&kPayload, chunk));
    // All channels receive at once: a step takes as long as its slowest
    // channel, not the sum of them.
    for (std::size_t c = 0; c < in.size(); ++c)
      sends.push_back(in[c]->get_async<int>(&received[c]));
    for (auto& c : sends) c->wait();
  };
  // Every step of a ring moves the same chunk between the same neighbours,
  // so after the first steps each takes the same time. Long rings simulate
  // `max_steps` of them and spend the rest of the steps at the measured
  // pace (proved against the full ring in collectives_test.cc).
  if (max_steps <= 0 || steps <= max_steps) {
    for (int s = 0; s < steps; ++s) step();
    return;
  }
  const int warm = max_steps / 2;
  for (int s = 0; s < warm; ++s) step();
  const double t0 = sg4::Engine::get_clock();
  for (int s = warm; s < max_steps; ++s) step();
  const double per_step = (sg4::Engine::get_clock() - t0) / (max_steps - warm);
  sg4::this_actor::sleep_for((steps - max_steps) * per_step);
}

void Ring(const Platform& platform, const ModelParams& params, const CollectiveCall& call, int me,
          int steps_factor_num, double chunk_total) {
  auto channels = RingChannels(platform, call.group);
  const int n = MembersOf(call);  // a folded ring runs the real ring's steps
  const int rank = call.group[me];
  std::vector<int> position;
  for (const auto& ring : channels) {
    position.push_back(static_cast<int>(std::find(ring.begin(), ring.end(), rank) - ring.begin()));
  }
  const double chunk = chunk_total / (n * static_cast<double>(channels.size()));
  RingSteps(channels, position, rank, call.tag, steps_factor_num * (n - 1), chunk,
            params.max_ring_steps);
}

// Double binary tree: two trees over the members, each reducing and then
// broadcasting half of the buffer in pipelined chunks. Tree 1 mirrors tree 0
// so that most inner members of one are leaves of the other.
struct TreeLinks {
  int parent = -1;
  std::vector<int> children;
};

TreeLinks TreeOf(int n, int me, int tree) {
  auto idx = [&](int i) { return tree == 0 ? i : n - 1 - i; };  // position <-> member
  int pos = idx(me);
  TreeLinks t;
  if (pos > 0) t.parent = idx((pos - 1) / 2);
  for (int c : {2 * pos + 1, 2 * pos + 2}) {
    if (c < n) t.children.push_back(idx(c));
  }
  return t;
}

int TreeChunks(double half_bytes, double chunk_bytes) {
  return std::max(1, static_cast<int>(half_bytes / chunk_bytes + 0.5));
}

// call.max_chunks > 0 simulates only that many of the chunks (see
// MeasureConcurrent).
void TreeHalf(const CollectiveCall& call, int me, int tree, double half_bytes, double chunk_bytes) {
  const int n = static_cast<int>(call.group.size());
  const TreeLinks links = TreeOf(n, me, tree);
  const int all_chunks = TreeChunks(half_bytes, chunk_bytes);
  const double chunk = half_bytes / all_chunks;
  const int chunks = call.max_chunks > 0 ? std::min(all_chunks, call.max_chunks) : all_chunks;
  const std::string t = "t" + std::to_string(tree);
  auto up_box = [&](int from, int to) { return Box(call.tag, t + "u" + std::to_string(from), to); };
  auto down_box = [&](int from, int to) {
    return Box(call.tag, t + "d" + std::to_string(from), to);
  };
  // Reduce (towards the root) and broadcast (away from it) run as two actors so
  // that chunk k can go down while chunk k+1 still goes up.
  auto reduced = std::make_shared<sg4::SemaphorePtr>(sg4::Semaphore::create(0));
  auto reducer = sg4::Actor::create(call.tag + t + "r", sg4::this_actor::get_host(), [=]() {
    std::vector<sg4::CommPtr> pending;
    for (int k = 0; k < chunks; ++k) {
      std::vector<sg4::CommPtr> gets;  // both children's chunks arrive at once
      std::vector<int*> data(links.children.size(), nullptr);
      for (std::size_t i = 0; i < links.children.size(); ++i) {
        gets.push_back(up_box(links.children[i], me)->get_async<int>(&data[i]));
      }
      for (auto& g : gets) g->wait();
      if (links.parent >= 0) {
        pending.push_back(up_box(me, links.parent)->put_async(&kPayload, chunk));
      } else {
        (*reduced)->release();
      }
    }
    for (auto& c : pending) c->wait();
  });
  std::vector<sg4::CommPtr> pending;
  for (int k = 0; k < chunks; ++k) {
    if (links.parent >= 0) {
      down_box(links.parent, me)->get<int>();
    } else {
      (*reduced)->acquire();
    }
    for (int c : links.children) pending.push_back(down_box(me, c)->put_async(&kPayload, chunk));
  }

  for (auto& c : pending) c->wait();
  reducer->join();
}

void Tree(const ModelParams& params, const CollectiveCall& call, int me) {
  if (call.group.size() == 1) return;
  auto other =
      sg4::Actor::create(call.tag + "tree1", sg4::this_actor::get_host(), [&params, call, me]() {
        TreeHalf(call, me, 1, call.bytes / 2, params.pipeline_chunk_bytes);
      });
  TreeHalf(call, me, 0, call.bytes / 2, params.pipeline_chunk_bytes);
  other->join();
}

void RunAlgorithm(const Platform& platform, const ModelParams& params, const CollectiveCall& call,
                  int me);

// Pieces a hierarchical all-reduce of `bytes` is cut into.
int HierarchicalPieces(double bytes, const ModelParams& params) {
  return TreeChunks(bytes, params.hierarchical_piece_bytes);
}

// Intra-node reduce-scatter, double binary tree all-reduce across nodes
// between members with the same local index, intra-node all-gather -- the
// pattern of NCCL's tree (intra-node phase, inter-node tree), with ring
// reduce-scatter/all-gather inside the node. Across nodes, the buffer is cut
// into pieces that go through the three phases in turn: one stage per phase,
// each with W = params.hierarchical_pieces_in_flight workers (worker w takes
// pieces w, w + W, ...); a piece enters a phase when the previous phase has
// finished it, so different pieces are in different phases at once.
// call.max_chunks > 0 simulates only that many pieces (see MeasureConcurrent).
void Hierarchical(const Platform& platform, const ModelParams& params, const CollectiveCall& call,
                  int me) {
  const int rank = call.group[me];
  std::map<int, std::vector<int>> by_node;
  for (int r : call.group) by_node[platform.node_of(r)].push_back(r);
  const std::vector<int> local = by_node[platform.node_of(rank)];
  const int local_index =
      static_cast<int>(std::find(local.begin(), local.end(), rank) - local.begin());
  std::vector<int> peers;  // same local index on every node
  for (const auto& [node, members] : by_node) {
    if (local_index < static_cast<int>(members.size())) peers.push_back(members[local_index]);
  }
  auto index_in = [](const std::vector<int>& g, int r) {
    return static_cast<int>(std::find(g.begin(), g.end(), r) - g.begin());
  };
  const std::string node_tag = call.tag + "/n" + std::to_string(platform.node_of(rank));
  const std::string peer_tag = call.tag + "/l" + std::to_string(local_index);
  const bool intra = local.size() > 1, inter = peers.size() > 1;
  // One node: reduce-scatter then all-gather on the same links, nothing to
  // pipeline. Decided for the whole group, so that every member walks the same pieces (a
  // member with no peer on other nodes, where nodes hold different numbers of members, still
  // takes part in its node's phases).
  const int all_pieces = by_node.size() > 1 ? HierarchicalPieces(call.bytes, params) : 1;
  const int pieces = call.max_chunks > 0 ? std::min(all_pieces, call.max_chunks) : all_pieces;
  const double piece = call.bytes / all_pieces;
  // The inter-node shard: 1 / (members of a node) of a piece, the same for every peer (on
  // uneven nodes the largest node's count, so that the peers' trees agree).
  size_t most = 1;
  for (const auto& [node, members] : by_node) most = std::max(most, members.size());
  auto call_for = [&](int phase, int k) {
    const std::string p = "/p" + std::to_string(k);
    if (phase == 0) {
      return CollectiveCall{CollKind::kReduceScatter, CollAlgo::kRing, piece, local,
                            node_tag + p + "rs"};
    }
    if (phase == 1) {
      return CollectiveCall{CollKind::kAllReduce, CollAlgo::kTree, piece / most, peers,
                            peer_tag + p};
    }
    return CollectiveCall{CollKind::kAllGather, CollAlgo::kRing, piece, local, node_tag + p + "ag"};
  };
  const int workers = std::max(1, std::min(pieces, params.hierarchical_pieces_in_flight));
  std::vector<std::vector<sg4::SemaphorePtr>> done(3);
  for (auto& d : done) {
    for (int k = 0; k < pieces; ++k) d.push_back(sg4::Semaphore::create(0));
  }
  std::vector<sg4::ActorPtr> actors;
  for (int phase = 0; phase < 3; ++phase) {
    const bool runs = phase == 1 ? inter : intra;
    const int index = index_in(phase == 1 ? peers : local, rank);
    for (int w = 0; w < workers; ++w) {
      auto work = [&, phase, runs, index, w]() {
        for (int k = w; k < pieces; k += workers) {
          if (phase > 0) done[phase - 1][k]->acquire();
          if (runs) RunAlgorithm(platform, params, call_for(phase, k), index);
          done[phase][k]->release();
        }
      };
      actors.push_back(
          sg4::Actor::create(call.tag + "h" + std::to_string(phase) + "." + std::to_string(w),
                             sg4::this_actor::get_host(), work));
    }
  }
  for (auto& a : actors) a->join();
}

// NVLink SHARP all-reduce inside one node (NCCL's NVLS): each member owns
// 1/n of the buffer, reduces it in the switch (multimem loads: the switch
// reads that slice from all n members and returns their sum) and multicasts
// the sum (multimem stores: the switch writes it to all n members). Each
// member's link so carries S (its buffer, read slice by slice) + S/n (its
// stored sum) out and S/n + S in: S (n + 1) / n each way, in one pass, with
// no ring steps. Simulated as that traffic: each member sends it to the next
// member (its own link out, the next member's link in), scaled by
// platform.nvls_traffic_scale (the links run at the NVLink efficiency).
// Member `me` sends bytes / n to every other member and receives as much from
// each, all at once (its own share stays on the GPU).
void AllToAll(const CollectiveCall& call, int me) {
  const int n = static_cast<int>(call.group.size());
  const double piece = call.bytes / n;
  std::vector<sg4::CommPtr> comms;
  std::vector<int*> received(n, nullptr);
  for (int j = 0; j < n; ++j) {
    if (j == me) continue;
    comms.push_back(
        Box(call.tag, "a2a" + std::to_string(me), call.group[j])->put_async(&kPayload, piece));
    comms.push_back(
        Box(call.tag, "a2a" + std::to_string(j), call.group[me])->get_async<int>(&received[j]));
  }
  sg4::Comm::wait_all(comms);
}

void Nvls(const Platform& platform, const CollectiveCall& call, int me) {
  const int n = static_cast<int>(call.group.size());
  const double bytes = call.bytes * (n + 1) / n * platform.nvls_traffic_scale;
  sg4::CommPtr send = Box(call.tag, "nvls", call.group[(me + 1) % n])->put_async(&kPayload, bytes);
  Box(call.tag, "nvls", call.group[me])->get<int>();
  send->wait();
}

// Parameter server (Li et al. 2014; BytePS, Jiang et al. 2020): every worker
// pushes 1/S of the buffer to each of the S servers, each server waits for
// all pushes of its share (reduction on the host is not timed) and sends the
// reduced share back to every worker.
void ParameterServer(const Platform& platform, const CollectiveCall& call, int me) {
  const int n = static_cast<int>(call.group.size());
  const int servers = static_cast<int>(call.servers.size());
  const double share = call.bytes / servers;
  const std::string tag = call.tag;  // the servers may outlive `call`
  auto push = [tag](int worker, int server) {
    return Box(tag, "push" + std::to_string(worker), server);
  };
  auto pull = [tag](int server, int worker) {
    return Box(tag, "pull" + std::to_string(server), worker);
  };
  if (me == 0) {
    for (int k = 0; k < servers; ++k) {
      const int server = call.servers[k];
      sg4::Actor::create(call.tag + "/server" + std::to_string(k), platform.host(server),
                         [group = call.group, n, share, server, push, pull]() {
                           std::vector<sg4::CommPtr> comms;
                           std::vector<int*> data(n, nullptr);
                           for (int w = 0; w < n; ++w) {
                             comms.push_back(push(group[w], server)->get_async<int>(&data[w]));
                           }
                           for (auto& c : comms) c->wait();
                           comms.clear();
                           for (int w = 0; w < n; ++w) {
                             comms.push_back(pull(server, group[w])->put_async(&kPayload, share));
                           }
                           for (auto& c : comms) c->wait();
                         });
    }
  }
  const int rank = call.group[me];
  std::vector<sg4::CommPtr> comms;
  for (int server : call.servers) comms.push_back(push(rank, server)->put_async(&kPayload, share));
  std::vector<int*> data(servers, nullptr);
  for (int k = 0; k < servers; ++k) {
    comms.push_back(pull(call.servers[k], rank)->get_async<int>(&data[k]));
  }
  for (auto& c : comms) c->wait();
}

}  // namespace

const char* ToString(CollKind k) {
  switch (k) {
    case CollKind::kAllReduce:
      return "all_reduce";
    case CollKind::kReduceScatter:
      return "reduce_scatter";
    case CollKind::kAllGather:
      return "all_gather";
    case CollKind::kSendRecv:
      return "send_recv";
    case CollKind::kAllToAll:
      return "all_to_all";
  }
  return "?";
}

const char* ToString(CollAlgo a) {
  switch (a) {
    case CollAlgo::kRing:
      return "ring";
    case CollAlgo::kTree:
      return "tree";
    case CollAlgo::kHierarchical:
      return "hierarchical";
    case CollAlgo::kParameterServer:
      return "parameter_server";
    case CollAlgo::kNvls:
      return "nvls";
  }
  return "?";
}

bool NvlsApplies(const Platform& platform, CollKind kind, const std::vector<int>& group) {
  if (kind != CollKind::kAllReduce || platform.nvls_traffic_scale <= 0 || group.size() < 2) {
    return false;
  }
  return std::all_of(group.begin(), group.end(), [&](int r) {
    return r < static_cast<int>(platform.gpus.size()) &&
           platform.node_of(r) == platform.node_of(group[0]);
  });
}

CollAlgo TpAlgo(const Platform& platform, CollKind kind, const std::vector<int>& group) {
  if (!NvlsApplies(platform, kind, group)) return CollAlgo::kRing;
  // Through each link NVLS moves S (n + 1) / n at the NVLS efficiency, the ring 2 (n - 1) / n S
  // at the NVLink one: for small groups the ring is faster (NCCL issue 1455: NVLS busbw equals
  // the ring's up to 4 GPUs on H100).
  const double n = static_cast<double>(group.size());
  return (n + 1) * platform.nvls_traffic_scale < 2 * (n - 1) ? CollAlgo::kNvls : CollAlgo::kRing;
}

double MeasureFastest(const Platform& platform, const ModelParams& params,
                      std::vector<CollectiveCall> calls, CollAlgo* chosen) {
  std::vector<CollAlgo> candidates = {CollAlgo::kRing};
  if (!calls.empty() && NvlsApplies(platform, calls[0].kind, calls[0].group)) {
    candidates.push_back(CollAlgo::kNvls);
  }
  if (!calls.empty() && calls[0].kind == CollKind::kAllReduce) {
    // The hierarchical algorithm needs several members on a node and several
    // nodes; otherwise it is the ring (one node) or a pipelined tree. It also
    // needs as many members on every node (NCCL's intra-node phase and
    // inter-node tree per local index); a group that ends half way through a
    // node is left to the ring and the tree.
    std::map<int, int> per_node;
    for (int r : calls[0].group) ++per_node[platform.node_of(r)];
    int most = 0, fewest = std::numeric_limits<int>::max();
    for (const auto& [node, count] : per_node) {
      most = std::max(most, count);
      fewest = std::min(fewest, count);
    }
    if (per_node.size() > 1 && most > 1 && fewest == most) {
      candidates.push_back(CollAlgo::kHierarchical);
    }
    if (calls[0].bytes <= params.tree_max_bytes) candidates.push_back(CollAlgo::kTree);
  }
  double best = 0;
  for (CollAlgo algo : candidates) {
    for (CollectiveCall& c : calls) c.algo = algo;
    const double t = MeasureConcurrent(platform, params, calls);
    if (algo == candidates[0] || t < best) {
      best = t;
      *chosen = algo;
    }
  }
  return best;
}

std::vector<std::vector<int>> RingChannels(const Platform& platform,
                                           const std::vector<int>& group) {
  // Members by node, in NVLink ring order inside the node.
  std::map<int, std::vector<int>> by_node;
  for (int r : group) by_node[platform.node_of(r)].push_back(r);
  std::vector<int> ring_pos(platform.gpus_per_node, 0);
  for (std::size_t k = 0; k < platform.nvlink_ring.size(); ++k)
    ring_pos[platform.nvlink_ring[k]] = static_cast<int>(k);
  std::size_t per_node = 0;
  for (auto& [node, members] : by_node) {
    std::sort(members.begin(), members.end(), [&](int a, int b) {
      return ring_pos[platform.local_of(a)] < ring_pos[platform.local_of(b)];
    });
    per_node = std::max(per_node, members.size());
  }
  // Inside one node of an NVLink mesh: NCCL's channels over all the links.
  if (by_node.size() == 1 && !platform.mesh_channels.empty()) {
    const auto& [node, members] = *by_node.begin();
    std::size_t mask = 0;
    for (int r : members) mask |= std::size_t{1} << platform.local_of(r);
    const auto& local = platform.mesh_channels[mask];
    if (local.size() >= 2) {
      std::vector<std::vector<int>> out;
      for (const std::vector<int>& channel : local) {
        std::vector<int> ring;
        for (int l : channel) ring.push_back(node * platform.gpus_per_node + l);
        out.push_back(std::move(ring));
      }
      return out;
    }
  }
  const bool multi_channel = by_node.size() > 1 && per_node > 1;
  const std::size_t channels = multi_channel ? per_node : 1;
  std::vector<std::vector<int>> out;
  for (std::size_t c = 0; c < channels; ++c) {
    std::vector<int> ring;
    for (const auto& [node, members] : by_node) {
      for (std::size_t k = 0; k < members.size(); ++k)
        ring.push_back(members[(k + c) % members.size()]);
    }
    out.push_back(std::move(ring));
  }
  return out;
}

int MembersOf(const CollectiveCall& call) {
  return call.members > 0 ? call.members : static_cast<int>(call.group.size());
}

int NodesOf(const Platform& platform, const CollectiveCall& call) {
  if (call.nodes > 0) return call.nodes;
  std::set<int> nodes;
  for (int r : call.group) nodes.insert(platform.node_of(r));
  return static_cast<int>(nodes.size());
}

double ProtocolLatency(const Platform& platform, const ModelParams& params,
                       const CollectiveCall& call) {
  const int n = MembersOf(call);
  if (call.kind == CollKind::kSendRecv || n <= 1) return 0;
  const int nodes = NodesOf(platform, call);
  const double intra = params.protocol_intra_step_latency_s;
  const double inter = params.protocol_inter_step_latency_s;
  double steps_latency = 0;
  if (call.kind == CollKind::kAllToAll) {  // one step: every pair at once
    steps_latency = nodes > 1 ? inter : intra;
  } else if (call.kind == CollKind::kAllReduce && call.algo != CollAlgo::kRing) {
    int log2_nodes = 0;
    while ((1 << log2_nodes) < nodes) ++log2_nodes;
    steps_latency = 2 * ((n / nodes - 1) * intra + log2_nodes * inter);
  } else {
    const int per_pass = call.kind == CollKind::kAllReduce ? 2 : 1;
    const int steps = per_pass * (n - 1), inter_steps = per_pass * (nodes - 1);
    steps_latency = (steps - inter_steps) * intra + inter_steps * inter;
  }
  return ProtocolLatencyScale(params, platform.infiniband, nodes, platform.protocol_latency_scale) *
         (params.protocol_base_latency_s + steps_latency);
}

void RunCollectiveMember(const Platform& platform, const ModelParams& params,
                         const CollectiveCall& call, int me) {
  const double latency = ProtocolLatency(platform, params, call);
  if (latency > 0) sg4::this_actor::sleep_for(latency);
  RunAlgorithm(platform, params, call, me);
}

namespace {

void RunAlgorithm(const Platform& platform, const ModelParams& params, const CollectiveCall& call,
                  int me) {
  const int n = static_cast<int>(call.group.size());
  if (call.kind == CollKind::kSendRecv) {
    if (me == 0) Box(call.tag, "p2p", call.group[1])->put(&kPayload, call.bytes);
    if (me == 1) Box(call.tag, "p2p", call.group[1])->get<int>();
    return;
  }
  if (call.algo == CollAlgo::kParameterServer && call.kind == CollKind::kAllReduce) {
    return ParameterServer(platform, call, me);
  }
  if (n <= 1) return;
  switch (call.kind) {
    case CollKind::kAllReduce:
      if (call.algo == CollAlgo::kTree) return Tree(params, call, me);
      if (call.algo == CollAlgo::kHierarchical) return Hierarchical(platform, params, call, me);
      if (call.algo == CollAlgo::kNvls) return Nvls(platform, call, me);
      return Ring(platform, params, call, me, 2, call.bytes);
    case CollKind::kReduceScatter:
    case CollKind::kAllGather:
      return Ring(platform, params, call, me, 1, call.bytes);
    case CollKind::kAllToAll:
      return AllToAll(call, me);
    case CollKind::kSendRecv:
      return;
  }
}

double RunConcurrent(const Platform& platform, const ModelParams& params,
                     const std::vector<CollectiveCall>& calls) {
  const double start = sg4::Engine::get_clock();
  for (const CollectiveCall& call : calls) {
    for (std::size_t m = 0; m < call.group.size(); ++m) {
      sg4::Actor::create(call.tag + "#" + std::to_string(m), platform.host(call.group[m]),
                         [&platform, &params, &call, m]() {
                           RunCollectiveMember(platform, params, call, static_cast<int>(m));
                         });
    }
  }
  sg4::Engine::get_instance()->run();
  return sg4::Engine::get_clock() - start;
}

// The node an endpoint is on (a GPU rank, or a node's host).
int NodeOfEndpoint(const Platform& platform, int endpoint) {
  const int gpus = static_cast<int>(platform.gpus.size());
  return endpoint < gpus ? platform.node_of(endpoint) : endpoint - gpus;
}

// What `calls` are up to where on the cluster they run: each call's fields
// with every endpoint as (its node less the first node any call uses, its
// place in the node), and for every node used, its leaf less the first node's
// leaf and that leaf's size (its uplink), and so for its pod where there are
// pods. The cluster is one instance type
// throughout, so calls of equal shape take the same time wherever they run:
// the DP collectives of identical pipeline stages, say.
std::vector<double> ShapeOf(const Platform& platform, const std::vector<CollectiveCall>& calls) {
  std::set<int> nodes;
  for (const CollectiveCall& c : calls) {
    for (const std::vector<int>* ends : {&c.group, &c.servers}) {
      for (int e : *ends) nodes.insert(NodeOfEndpoint(platform, e));
    }
  }
  if (nodes.empty()) return {};
  const int base = *nodes.begin();
  std::vector<double> out;
  for (const CollectiveCall& c : calls) {
    out.insert(out.end(), {static_cast<double>(c.kind), static_cast<double>(c.algo), c.bytes,
                           static_cast<double>(c.max_chunks), static_cast<double>(c.members),
                           static_cast<double>(c.nodes), -1});
    for (const std::vector<int>* ends : {&c.group, &c.servers}) {
      for (int e : *ends) {
        const bool gpu = e < static_cast<int>(platform.gpus.size());
        out.push_back(NodeOfEndpoint(platform, e) - base);
        out.push_back(gpu ? platform.local_of(e) : -1);
      }
      out.push_back(-1);
    }
  }
  const int leaves = (platform.nodes + platform.nodes_per_leaf - 1) / platform.nodes_per_leaf;
  for (int n : nodes) {
    const int leaf = platform.leaf_of(n);
    const int size = leaf + 1 < leaves ? platform.nodes_per_leaf
                                       : platform.nodes - leaf * platform.nodes_per_leaf;
    out.insert(out.end(),
               {static_cast<double>(n - base), static_cast<double>(leaf - platform.leaf_of(base)),
                static_cast<double>(size)});
    if (!platform.pod_nodes.empty()) {  // where the pods' boundaries fall, and their sizes
      const int pod = platform.pod_of(n);
      out.insert(out.end(), {static_cast<double>(pod - platform.pod_of(base)),
                             static_cast<double>(platform.pod_nodes[pod])});
    }
  }
  return out;
}

// RunConcurrent, simulating once what is repeated node by node. A call whose
// endpoints are all on one node uses only that node's links, so calls on
// different nodes share nothing and all of them end when the slowest node's
// do; nodes running calls of the same shape (ShapeOf) take the same time, so
// one node of each shape is simulated (docs/model.md section 4).
// Calls that span nodes share the fabric: then everything runs together.
double RunNodeByNode(const Platform& platform, const ModelParams& params,
                     const std::vector<CollectiveCall>& calls) {
  if (!params.node_by_node) return RunConcurrent(platform, params, calls);
  std::map<int, std::vector<const CollectiveCall*>> by_node;
  for (const CollectiveCall& c : calls) {
    std::set<int> nodes;
    for (const std::vector<int>* ends : {&c.group, &c.servers}) {
      for (int e : *ends) nodes.insert(NodeOfEndpoint(platform, e));
    }
    if (nodes.size() != 1) return RunConcurrent(platform, params, calls);
    by_node[*nodes.begin()].push_back(&c);
  }
  if (by_node.size() <= 1) return RunConcurrent(platform, params, calls);
  std::set<std::vector<double>> seen;
  double slowest = 0;
  for (const auto& [node, node_calls] : by_node) {
    std::vector<CollectiveCall> subset;
    for (const CollectiveCall* c : node_calls) subset.push_back(*c);
    if (!seen.insert(ShapeOf(platform, subset)).second) continue;
    slowest = std::max(slowest, RunConcurrent(platform, params, subset));
  }
  return slowest;
}

double MeasureDepth(const Platform& platform, const ModelParams& params,
                    const std::vector<CollectiveCall>& calls);

bool IsRing(const CollectiveCall& c) {
  return c.kind == CollKind::kReduceScatter || c.kind == CollKind::kAllGather ||
         (c.kind == CollKind::kAllReduce && c.algo == CollAlgo::kRing);
}

// Rings that span nodes keep the first and the last node of each leaf they
// pass through (docs/model.md section 4, "Ring ends"), with the real group's
// size (CollectiveCall::members, nodes). A ring's step moves the same chunk
// over every hop, so its pace is its slowest hop's; the hops it drops run
// between two nodes of one leaf, as the hop between the kept ends does, and
// every kept node keeps all its members of every call (its port's load) and
// every leaf crossing is kept (the uplinks' load). Not for trees.
std::vector<CollectiveCall> RingEnds(const Platform& platform,
                                     const std::vector<CollectiveCall>& calls) {
  std::set<int> kept;
  bool thinner = false;
  for (const CollectiveCall& c : calls) {
    if (!IsRing(c)) return calls;
    std::set<int> node_set;
    for (int r : c.group) node_set.insert(platform.node_of(r));
    const std::vector<int> nodes(node_set.begin(), node_set.end());
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      const int leaf = platform.leaf_of(nodes[i]);
      const bool first = i == 0 || platform.leaf_of(nodes[i - 1]) != leaf;
      const bool last = i + 1 == nodes.size() || platform.leaf_of(nodes[i + 1]) != leaf;
      if (first || last) {
        kept.insert(nodes[i]);
      } else {
        thinner = true;
      }
    }
  }
  if (!thinner) return calls;
  std::vector<CollectiveCall> out;
  for (const CollectiveCall& c : calls) {
    CollectiveCall t = c;
    t.members = MembersOf(c);
    t.nodes = NodesOf(platform, c);
    t.group.clear();
    for (int r : c.group) {
      if (kept.count(platform.node_of(r))) t.group.push_back(r);
    }
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace

double MeasureConcurrent(const Platform& platform, const ModelParams& params,
                         const std::vector<CollectiveCall>& given) {
  const std::vector<CollectiveCall> calls = params.ring_ends ? RingEnds(platform, given) : given;
  if (!params.node_by_node || !platform.measured) return MeasureDepth(platform, params, calls);
  const std::vector<double> shape = ShapeOf(platform, calls);
  if (auto it = platform.measured->find(shape); it != platform.measured->end()) return it->second;
  const double seconds = MeasureDepth(platform, params, calls);
  platform.measured->emplace(shape, seconds);
  return seconds;
}

namespace {

// The depth of the double binary tree over n members (TreeOf): floor(log2 n).
int TreeDepth(int n) {
  int depth = 0;
  while ((2 << depth) <= n) ++depth;
  return depth;
}

// The members of a tree or hierarchical all-reduce's tree: members, or for
// the hierarchical algorithm (a tree across nodes) the nodes; real or simulated.
int TreeMembers(const Platform& platform, const CollectiveCall& c, bool real) {
  const bool across_nodes = c.algo == CollAlgo::kHierarchical;
  if (real) return across_nodes ? NodesOf(platform, c) : MembersOf(c);
  CollectiveCall part = c;
  part.members = part.nodes = 0;
  return across_nodes ? NodesOf(platform, part) : MembersOf(part);
}

// `c` on half of its tree: its members on every other one of its nodes (the
// half spans the same leaves as the whole, with as many members per node).
CollectiveCall HalfOf(const Platform& platform, const CollectiveCall& c) {
  std::set<int> nodes;
  for (int r : c.group) nodes.insert(platform.node_of(r));
  std::set<int> kept;
  for (auto it = nodes.begin(); it != nodes.end(); ++it) {
    if (std::distance(nodes.begin(), it) % 2 == 0) kept.insert(*it);
  }
  CollectiveCall half = c;
  half.group.clear();
  for (int r : c.group) {
    if (kept.count(platform.node_of(r))) half.group.push_back(r);
  }
  return half;
}

double MeasureOnce(const Platform& platform, const ModelParams& params,
                   const std::vector<CollectiveCall>& calls);

// MeasureConcurrent without the memo. A folded tree (members beyond its group)
// costs a fill time that grows by a step per level of depth and a steady time
// per chunk that does not: measured on the part (depth d) and on half of it
// (depth d - 1), it is extended by the difference for each level the real tree
// has beyond d (proved against unfolded trees in the tests).
double MeasureDepth(const Platform& platform, const ModelParams& params,
                    const std::vector<CollectiveCall>& calls) {
  const CollectiveCall* tree = nullptr;
  for (const CollectiveCall& c : calls) {
    const bool is_tree = c.kind == CollKind::kAllReduce &&
                         (c.algo == CollAlgo::kTree || c.algo == CollAlgo::kHierarchical);
    if (is_tree && TreeMembers(platform, c, true) > TreeMembers(platform, c, false)) tree = &c;
  }
  const double full = MeasureOnce(platform, params, calls);
  if (!tree) return full;
  const int levels = TreeDepth(TreeMembers(platform, *tree, true)) -
                     TreeDepth(TreeMembers(platform, *tree, false));
  const CollectiveCall half_tree = HalfOf(platform, *tree);
  const int step = TreeDepth(TreeMembers(platform, *tree, false)) -
                   TreeDepth(TreeMembers(platform, half_tree, false));
  if (levels <= 0 || step <= 0) return full;
  std::vector<CollectiveCall> halves;
  for (const CollectiveCall& c : calls) halves.push_back(HalfOf(platform, c));
  const double half = MeasureOnce(platform, params, halves);
  return full + levels * (full - half) / step;
}

// MeasureDepth's measurement of calls as they are.
double MeasureOnce(const Platform& platform, const ModelParams& params,
                   const std::vector<CollectiveCall>& calls) {
  // A pipelined tree of C chunks takes a fill time plus C times a steady
  // per-chunk time. Long ones are simulated with K and 2K chunks and the rest
  // extrapolated on that line (proved against every chunk in the tests).
  // The hierarchical all-reduce's pieces are such a pipeline too.
  int chunks = 0, k = 0;
  for (const CollectiveCall& c : calls) {
    if (c.kind == CollKind::kAllReduce && c.algo == CollAlgo::kTree) {
      chunks = std::max(chunks, TreeChunks(c.bytes / 2, params.pipeline_chunk_bytes));
      k = params.max_tree_chunks;
    }
    if (c.kind == CollKind::kAllReduce && c.algo == CollAlgo::kHierarchical) {
      chunks = std::max(chunks, HierarchicalPieces(c.bytes, params));
      k = params.max_hierarchical_pieces;
    }
  }
  if (k <= 0 || chunks <= 2 * k) return RunNodeByNode(platform, params, calls);
  std::vector<CollectiveCall> truncated = calls;
  for (CollectiveCall& c : truncated) c.max_chunks = k;
  const double t1 = RunNodeByNode(platform, params, truncated);
  for (CollectiveCall& c : truncated) c.max_chunks = 2 * k;
  const double t2 = RunNodeByNode(platform, params, truncated);
  return t1 + (chunks - k) * (t2 - t1) / k;
}

}  // namespace

}  // namespace trainsim::sim
