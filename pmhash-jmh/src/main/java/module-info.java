/**
 * pmhash's JMH benchmarks and the workload command (the README's main job). The
 * benchmarks are built into {@code pmhash-jmh/target/benchmarks.jar}, a shaded jar
 * that runs on the class path: {@code java -jar benchmarks.jar -h}.
 */
@SuppressWarnings("requires-automatic") // jmh.core has no module descriptor, only a name
module io.pmhash.jmh {
  requires io.pmhash.schemes;
  requires jmh.core;

  exports io.pmhash.jmh.workload;
  // Open (not exported: no API here) for JMH's reflection, should the harness ever
  // run on the module path; the shaded jar runs on the class path, where module
  // boundaries do not apply.
  opens io.pmhash.jmh;
}
