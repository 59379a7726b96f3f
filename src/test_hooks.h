// Test-only access to a decoder's internals: the path switches and counters
// of its workspace, the chain's stages' (StageTuning, StageProbes) and the
// Bregman solver's (BregmanTuning, BregmanProbes). The one header through
// which tests and bench tools reach them; the library and its bindings never
// include it, and nothing here is part of the product's API.
//   A stage driven directly (with a Workspace of its own) needs none of
// this: its workspace's tuning and probes are public members.
#pragma once

#include <cstddef>
#include <vector>

#include "bregman/bregman.h"
#include "decoder.h"
#include "workspace.h"

namespace bd {

// Declared a friend by Decoder.
struct TestHooks {
  static Workspace& WorkspaceOf(Decoder& d) { return d.ws_; }
};

namespace test_hooks {

// The decoder's switches: a change holds for its later calls, and for no
// other decoder.
inline StageTuning& Tuning(Decoder& d) { return TestHooks::WorkspaceOf(d).tuning; }

// The decoder's counters since it was made (read differences around calls).
inline const StageProbes& Probes(Decoder& d) { return TestHooks::WorkspaceOf(d).probes; }

}  // namespace test_hooks

// ---- The Bregman solver's (bregman.h). A test that decodes with its own
// BregmanWorkspace sets and reads ws.tuning and ws.probes directly.

// The Bregman workspace a Decoder's chain decodes with: its tuning is read by
// every later Decode/Sample of that decoder, its probes count their work.
inline BregmanWorkspace& BregmanWorkspaceOf(Decoder& decoder) {
  return TestHooks::WorkspaceOf(decoder).bregman;
}
inline BregmanTuning& BregmanTuningOf(Decoder& decoder) { return BregmanWorkspaceOf(decoder).tuning; }
inline BregmanProbes& BregmanProbesOf(Decoder& decoder) { return BregmanWorkspaceOf(decoder).probes; }

// The sizes the last ApplyBregman asked EnsureSorted for, in order (up to
// BregmanProbes::kRecordedPrefixRequests).
inline std::vector<size_t> PrefixRequests(const BregmanProbes& probes) {
  return std::vector<size_t>(probes.prefix_requests,
                             probes.prefix_requests + probes.prefix_request_count);
}

}  // namespace bd
