package io.pmhash.jmh.workload;

import io.pmhash.core.PersistenceStats;

/** What one measured phase did. */
record PhaseResult(String phase, long ops, double seconds, PersistenceStats persists, double loadFactor) {
  PhaseResult withLoadFactor(double lf) {
    return new PhaseResult(phase, ops, seconds, persists, lf);
  }

  double mops() {
    return ops / seconds / 1e6;
  }

  double flushesPerOp() {
    return (double) persists.linesFlushed() / ops;
  }

  double drainsPerOp() {
    return (double) persists.drains() / ops;
  }
}
