package io.pmhash.schemes.cceh;

/**
 * The contract of {@link CcehContractTest} (options and invariants included) on the llpl
 * backend: the table in a pmhash pool hosted in a PMDK pool file (docs/llpl.md), its header,
 * directory and segments PMDK objects outside the pool block, 64-byte aligned.
 */
class CcehLlplContractTest extends CcehContractTest {
  @Override
  protected String backend() {
    return "llpl";
  }
}
