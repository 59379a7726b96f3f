// Test-only access to a decoder's internals: the stages' path switches
// (StageTuning) and counters (StageProbes) of its workspace. Included by
// tests/native only; the library and its bindings never include it, and
// nothing here is part of the product's API.
//   A stage driven directly (with a Workspace of its own) needs none of
// this: its workspace's tuning and probes are public members.
#pragma once

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

// ---- Bregman's hooks (bregman.h, key_sort.h) ------------------------------
// Moved here by the Bregman slice of the redesign.

}  // namespace test_hooks
}  // namespace bd
