package io.pmhash.schemes.group;

/**
 * The contract of {@link GroupContractTest} (options and invariants included) on the llpl
 * backend: the table in a pmhash pool hosted in a PMDK pool file (docs/llpl.md), its table block
 * a PMDK object outside the pool block, 64-byte aligned, and the only block PMDK holds for it.
 */
class GroupLlplContractTest extends GroupContractTest {
  @Override
  protected String backend() {
    return "llpl";
  }
}
