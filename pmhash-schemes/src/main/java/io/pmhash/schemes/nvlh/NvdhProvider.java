package io.pmhash.schemes.nvlh;

import io.pmhash.core.Pool;
import io.pmhash.map.LongHashTable;
import io.pmhash.map.TableOptions;
import io.pmhash.map.spi.SchemeProvider;
import java.util.Map;

/**
 * The {@code nvdh} scheme for {@link io.pmhash.map.PmHash}: NVLH's double-hashing baseline
 * ({@link NvdhTable}). {@link TableOptions#initialCapacity()} sizes the first table.
 *
 * <p>Parameter {@value #TRANSACTIONS} (default 0): 1 runs every insert, update and delete as a
 * durable undo-log transaction, as the paper's NVDH did (§IV); 0 uses the log-free one-word
 * commits, the stronger baseline. Recorded in the pool header; a pool created before the
 * parameter existed opens as 0.
 */
public final class NvdhProvider implements SchemeProvider {
  /** The scheme name in pool headers. */
  public static final String NAME = "nvdh";
  /** Parameter: writes as durable transactions (1) or log-free (0). */
  public static final String TRANSACTIONS = "transactions";

  /** For {@link java.util.ServiceLoader}. */
  public NvdhProvider() {}

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public int layoutVersion() {
    return NvdhLayout.LAYOUT_VERSION;
  }

  /** Its blocks come from {@link Pool#schemeAllocator()}: every reader and writer holds the table's lock. */
  @Override
  public boolean usesSchemeAllocator() {
    return true;
  }

  @Override
  public Map<String, Long> defaultParams() {
    return Map.of(TRANSACTIONS, 0L);
  }

  @Override
  public long[] headerParams(TableOptions options) {
    long tx = options.param(TRANSACTIONS, 0);
    if (tx != 0 && tx != 1) {
      throw new IllegalArgumentException("nvdh parameter " + TRANSACTIONS + " must be 0 (log-free writes) or 1 (durable transactions, as the paper's NVDH), got " + tx);
    }
    return new long[] {tx};
  }

  @Override
  public LongHashTable create(Pool pool, TableOptions options) {
    return NvdhTable.create(pool, options.initialCapacity(), headerParams(options)[0] == 1);
  }

  @Override
  public LongHashTable open(Pool pool, TableOptions options) {
    long[] p = pool.schemeParams();
    if (p.length > 1 || p.length == 1 && p[0] != 0 && p[0] != 1) {
      throw NvlhRecovery.corrupt("nvdh: the pool header's scheme parameters " + java.util.Arrays.toString(p) + " are not [" + TRANSACTIONS + " = 0 or 1]");
    }
    return NvdhTable.open(pool, p.length == 1 && p[0] == 1);
  }
}
