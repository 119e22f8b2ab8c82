package io.pmhash.schemes.dash;

/**
 * The contract of {@link DashLhContractTest} (options and invariants included) on the llpl
 * backend: the table in a pmhash pool hosted in a PMDK pool file (docs/llpl.md), its header,
 * segment arrays and chained stash buckets PMDK objects outside the pool block, 64-byte aligned,
 * and exactly the blocks PMDK holds for it.
 */
class DashLhLlplContractTest extends DashLhContractTest {
  @Override
  protected String backend() {
    return "llpl";
  }
}
