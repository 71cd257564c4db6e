package dev.quarry.ingest;

import java.util.Collection;

/** An axis-aligned box in top-down page coordinates (y grows downwards). */
record PdfRect(float x0, float top, float x1, float bottom) {
  float width() {
    return x1 - x0;
  }

  float height() {
    return bottom - top;
  }

  float centerX() {
    return (x0 + x1) / 2;
  }

  float centerY() {
    return (top + bottom) / 2;
  }

  PdfRect union(PdfRect o) {
    return new PdfRect(Math.min(x0, o.x0), Math.min(top, o.top), Math.max(x1, o.x1),
        Math.max(bottom, o.bottom));
  }

  PdfRect clip(float width, float height) {
    return new PdfRect(Math.max(0, x0), Math.max(0, top), Math.min(width, x1),
        Math.min(height, bottom));
  }

  boolean contains(float x, float y) {
    return x >= x0 && x <= x1 && y >= top && y <= bottom;
  }

  /** Whether the boxes overlap or come within {@code margin} of each other. */
  boolean near(PdfRect o, float margin) {
    return o.x0 <= x1 + margin && x0 <= o.x1 + margin && o.top <= bottom + margin
        && top <= o.bottom + margin;
  }

  float overlapArea(PdfRect o) {
    float w = Math.min(x1, o.x1) - Math.max(x0, o.x0);
    float h = Math.min(bottom, o.bottom) - Math.max(top, o.top);
    return w > 0 && h > 0 ? w * h : 0;
  }

  static PdfRect around(Collection<PdfRect> rects) {
    PdfRect r = null;
    for (PdfRect x : rects) {
      r = r == null ? x : r.union(x);
    }
    return r;
  }
}
