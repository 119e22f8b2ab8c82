package io.pmhash.schemes.level;

/**
 * The contract of {@link LevelContractTest} (options and invariants included) on the llpl
 * backend: the table in a pmhash pool hosted in a PMDK pool file (docs/llpl.md), its header and
 * both levels PMDK objects outside the pool block, 64-byte aligned.
 */
class LevelLlplContractTest extends LevelContractTest {
  @Override
  protected String backend() {
    return "llpl";
  }
}
