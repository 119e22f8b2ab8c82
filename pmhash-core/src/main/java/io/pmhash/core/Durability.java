package io.pmhash.core;

/**
 * What a pool's persistence points do, and so what a pool survives. Chosen when a pool is
 * created or opened; not recorded in the file (the same file may be opened in another mode).
 * See {@code docs/persistence.md} for what each mode survives and costs.
 *
 * <table class="striped">
 *   <caption>Durability modes</caption>
 *   <tr><th>mode</th><th>file</th><th>flush / drain</th><th>survives</th></tr>
 *   <tr><td>{@link #PMEM}</td><td>DAX, mapped with MAP_SYNC</td>
 *       <td>clwb / clflushopt / clflush + sfence</td><td>power loss</td></tr>
 *   <tr><td>{@link #PMEM_EMULATED}</td><td>any</td><td>the same instructions</td>
 *       <td>process crash; the cost model of persistent memory</td></tr>
 *   <tr><td>{@link #MSYNC}</td><td>any block-backed file</td><td>msync of the dirty range at drain</td>
 *       <td>power loss, slowly</td></tr>
 *   <tr><td>{@link #PROCESS}</td><td>any</td><td>ordering only</td><td>process crash (kill -9)</td></tr>
 *   <tr><td>{@link #VOLATILE}</td><td>none (anonymous memory)</td><td>nothing</td>
 *       <td>nothing: a DRAM baseline</td></tr>
 * </table>
 */
public enum Durability {
  /**
   * Persistent memory: the file must be on a DAX file system and is mapped with
   * {@code MAP_SYNC}; flushes are native cache-line write-backs. Opening a file that cannot be
   * mapped so fails with {@link DurabilityUnsupportedException}; it never silently degrades.
   */
  PMEM,
  /**
   * Any file, flushed with the same native instructions as {@link #PMEM}: the cost model of
   * persistent memory on ordinary memory. Survives a process crash, not a power loss (the page
   * cache is not persistent).
   */
  PMEM_EMULATED,
  /** Any block-backed file; each drain msyncs the ranges flushed since the last drain. */
  MSYNC,
  /**
   * Any file; flushes do nothing and drains only order stores. The mapping is shared, so every
   * store is in the page cache the moment it executes: survives kill -9, not power loss.
   */
  PROCESS,
  /** No file: anonymous memory. Survives nothing; the DRAM baseline of the benchmarks. */
  VOLATILE,
  /**
   * The default: {@link #PMEM} where the file can be mapped with {@code MAP_SYNC}, else {@link
   * #PROCESS}. The mode chosen is logged at open and returned by {@link Pool#durability()}.
   */
  AUTO
}
