// Test-only access to the Bregman solver's switches and counters
// (BregmanTuning, BregmanProbes in bregman.h). They live in the workspace of
// the decoder that uses them; a test that decodes with its own
// BregmanWorkspace sets and reads ws.tuning and ws.probes directly, and one
// that decodes through a Decoder reaches its workspace here. Never included
// by the library itself.
#pragma once

#include <cstddef>
#include <vector>

#include "bregman/bregman.h"
#include "decoder.h"
#include "workspace.h"

namespace bd {

// The Decoder's workspace, for the tests (Decoder names it a friend).
struct DecoderTestAccess {
  static Workspace& Of(Decoder& decoder) { return decoder.ws_; }
};

// The Bregman workspace a Decoder's chain decodes with: its tuning is read by
// every later Decode/Sample of that decoder, its probes count their work.
inline BregmanWorkspace& BregmanWorkspaceOf(Decoder& decoder) {
  return DecoderTestAccess::Of(decoder).bregman;
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
