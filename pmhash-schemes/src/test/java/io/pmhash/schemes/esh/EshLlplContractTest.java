package io.pmhash.schemes.esh;

/**
 * The contract of {@link EshContractTest} (options and invariants included) on the llpl backend:
 * the table in a pmhash pool hosted in a PMDK pool file (docs/llpl.md), its header, directory
 * and segments PMDK objects outside the pool block, 64-byte aligned.
 */
class EshLlplContractTest extends EshContractTest {
  @Override
  protected String backend() {
    return "llpl";
  }
}
