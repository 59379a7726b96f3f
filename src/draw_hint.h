// What the last stage that cut the candidates hands the draw besides them:
// exps it computed anyway, so the draw sums them instead of recomputing (the
// same bits: tests/native/test_decoder.cc draws both ways), and, for a large
// cut of the row, the cut itself as a band of the row that is never gathered.
// A stage returns it through StageCall::out (ChainOutcome::draw_hint); the
// chain keeps it only while the list it describes is unchanged
// (Candidates::list_version), and Decoder::Sample passes it to DrawToken.
#pragma once

#include <cstddef>
#include <cstdint>

namespace bd {

struct DrawHint {
  enum class Kind : uint8_t {
    // Nothing: the draw computes its weights from the candidates.
    kNone,
    // The candidates are the band lo <= logit <= hi of the row (count
    // entries; Candidates::truncated false, the row never gathered), weighed
    // by the row-aligned exps. Left only by top-p and typical on the row,
    // where the draw follows at once (StageContext::draw_follows) and the
    // band is large (KeepAsRowBand): gathering 100 000+ survivors costs more
    // than the draw that reads them. Nothing but the draw reads it (and, for
    // a Sample that returns the distribution, GatherRowBand after the draw).
    kRowBand,
    // The list's exps, list-aligned, and the list's ids ascend. Left by a
    // stage that had them anyway (top-p and typical on the row). max is the
    // row's max, which for top-p (it keeps the max) is the list's, and for
    // typical the max its walk measured the kept mass from: at the draw's
    // scale these exps are the list's weights by definition (the same law as
    // exps from the list's own max, not always the same bits), and the draw
    // sums them instead of recomputing (SumBlocks: the same bits). They
    // never all underflow: the kept mass passes the stage's target.
    kListExps,
  };
  Kind kind = Kind::kNone;
  // exps[i] = exp((logit_i - max) * scale) exactly as the stage's exp pass
  // computed it: row-aligned for a band, list-aligned for a list.
  const float* exps = nullptr;
  float max = 0.0f;
  float scale = 0.0f;
  float lo = 0.0f, hi = 0.0f;  // kRowBand: the band's bounds
  size_t count = 0;            // kRowBand: how many entries of the row it holds
  // The Candidates::list_version of the candidates it describes: any later
  // change to them makes it stale.
  uint32_t list_version = 0;

  static DrawHint ListExps(const float* exps, float max, float scale, uint32_t list_version) {
    DrawHint h;
    h.kind = Kind::kListExps;
    h.exps = exps;
    h.max = max;
    h.scale = scale;
    h.list_version = list_version;
    return h;
  }
  static DrawHint RowBand(float lo, float hi, size_t count, const float* exps, float max,
                          float scale, uint32_t list_version) {
    DrawHint h = ListExps(exps, max, scale, list_version);
    h.kind = Kind::kRowBand;
    h.lo = lo;
    h.hi = hi;
    h.count = count;
    return h;
  }
};

}  // namespace bd
