package io.pmhash.schemes.process;

/**
 * {@link ProcessCrashTest} on the llpl backend: every scheme's table in a pmhash pool hosted in a
 * PMDK pool file, written by a child JVM that is killed with SIGKILL at random (PROCESS and
 * PMEM_EMULATED) or halted at the n-th drain inside a structural change; each reopen goes
 * through PMDK's own open (pmemobj_open, with its recovery) and then pmhash's. This is the crash
 * test that sees PMDK too: the crash simulator's images cover pmhash's region only (docs/llpl.md).
 */
class LlplProcessCrashTest extends ProcessCrashTest {
  @Override
  String backend() {
    return "llpl";
  }
}
