/** pmhash benchmarks and the workload command (the README's main job). */
module io.pmhash.jmh {
  requires io.pmhash.schemes;

  exports io.pmhash.jmh.workload;
}
