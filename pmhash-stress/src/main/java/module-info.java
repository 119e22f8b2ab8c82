/**
 * pmhash's jcstress tests. Built into {@code pmhash-stress/target/jcstress.jar}, a
 * shaded jar that runs on the class path: {@code java -jar jcstress.jar -h}.
 */
@SuppressWarnings("requires-automatic") // jcstress.core has no module descriptor, only a name
module io.pmhash.stress {
  requires io.pmhash.schemes;
  requires jcstress.core;

  // Open (not exported: no API here) for jcstress's reflection, should the harness ever
  // run on the module path; the shaded jar runs on the class path, where module
  // boundaries do not apply.
  opens io.pmhash.stress;
}
