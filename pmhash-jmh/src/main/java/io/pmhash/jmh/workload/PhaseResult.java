package io.pmhash.jmh.workload;

import io.pmhash.core.PersistenceStats;

/**
 * What one measured phase did; {@code latency} is null unless {@code --latency} asked for it.
 */
record PhaseResult(String phase, long ops, double seconds, PersistenceStats persists, double loadFactor,
    LatencyHistogram latency) {
  PhaseResult withLoadFactor(double lf) {
    return new PhaseResult(phase, ops, seconds, persists, lf, latency);
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
