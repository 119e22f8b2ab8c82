package io.pmhash.schemes.process;

import io.pmhash.core.Durability;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * {@link ProcessCrashTest} on the llpl backend: every scheme's table in a pmhash pool hosted in a
 * PMDK pool file, written by a child JVM that is killed with SIGKILL at random (PROCESS and
 * PMEM_EMULATED) or halted at the n-th drain inside a structural change; each reopen goes
 * through PMDK's own open (pmemobj_open, with its recovery) and then pmhash's. This is the crash
 * test that sees PMDK too: the crash simulator's images cover pmhash's region only (docs/llpl.md).
 * NVLH's splits and merges run in PMDK transactions here; NVDH with {@code transactions=1}, whose
 * every write is one, is killed at random as well, so most kills land in or between PMDK
 * transactions.
 */
class LlplProcessCrashTest extends ProcessCrashTest {
  @Override
  String backend() {
    return "llpl";
  }

  /**
   * NVDH's rehash, level hashing's expansion and group hashing's resize on llpl have one pmhash
   * drain each, the new table's or level's persist: the switch is one {@code pmemobj_publish}, which no {@code Persistence}
   * sees (on FFM the same switch is a redo step of four drains, so a halt at drain 1 to 6 lands in
   * the first or second resize). Halting at the 3rd to 6th structural drain would take up to six
   * doublings per child and, over the rounds, a table far past the pool's room (docs/llpl.md,
   * Room: a 64 MiB pool holds a level table of a 32 MiB top level); so such a child halts in its
   * first or its second resize, just before the publish (the second after the first committed,
   * so the table grows from round to round), and the random kills cover the rest.
   */
  @Override
  int maxStructuralHalt(String scheme) {
    return scheme.equals("nvdh") || scheme.equals("level") || scheme.equals("group") ? 2 : super.maxStructuralHalt(scheme);
  }

  @ParameterizedTest(name = "nvdh transactions=1 {0}")
  @EnumSource(value = Durability.class, names = {"PROCESS", "PMEM_EMULATED"})
  void killedTransactionalNvdhWritersLoseNoAcknowledgedWrite(Durability mode) throws Exception {
    killedWritersLoseNoAcknowledgedWrite("nvdh:transactions:1", mode);
  }
}
