package io.pmhash.schemes.dash;

/**
 * The contract of {@link DashEhContractTest} (options and invariants included) on the llpl
 * backend: the table in a pmhash pool hosted in a PMDK pool file (docs/llpl.md), its header,
 * directory and segments PMDK objects outside the pool block, 64-byte aligned.
 */
class DashEhLlplContractTest extends DashEhContractTest {
  @Override
  protected String backend() {
    return "llpl";
  }
}
