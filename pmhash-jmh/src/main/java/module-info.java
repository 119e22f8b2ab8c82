/**
 * pmhash's JMH benchmarks and the workload command (the README's main job). The
 * benchmarks are built into {@code pmhash-jmh/target/benchmarks.jar}, a shaded jar
 * that runs on the class path: {@code java -jar benchmarks.jar -h}.
 */
// jmh.core and the JVM's alternatives have no module descriptors, only names (mapdb,
// rocksdbjni and llpl only their file names).
@SuppressWarnings({"requires-automatic", "requires-transitive-automatic"})
module io.pmhash.jmh {
  requires io.pmhash.schemes;
  requires jmh.core;
  requires chronicle.map;
  requires mapdb;
  requires rocksdbjni;
  requires llpl; // LlplHeapBenchmark's bare llpl table
  requires java.desktop; // the charts: java.awt and ImageIO, headless
  requires java.management; // the workload's --fresh-open: the new JVM's uptime
  requires java.logging; // the workload's warm-up quiets the pool's INFO lines

  // Nothing exported: an application (the workload command, the benchmarks), not an API;
  // maven-compiler-plugin then reports the automatic modules above at INFO level, as it
  // does for applications, instead of warning against publishing a library that needs them.
  // Open (not exported: no API here) for JMH's reflection, should the harness ever
  // run on the module path; the shaded jar runs on the class path, where module
  // boundaries do not apply.
  opens io.pmhash.jmh;
}
