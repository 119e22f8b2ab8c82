package io.pmhash.schemes.group;

import io.pmhash.core.Pool;
import io.pmhash.map.LongHashTable;
import io.pmhash.map.TableOptions;
import io.pmhash.map.spi.SchemeProvider;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The {@code group} scheme for {@link io.pmhash.map.PmHash}. Parameters, recorded as pool header
 * parameters 0 and 1:
 *
 * <ul>
 *   <li>{@code groupSize}: cells per group, a power of two 64..4096, default 256 (§4.5);
 *   <li>{@code expand}: 1 (default) grows the table when a group is full; 0 keeps the paper's
 *       fixed-size table, whose inserts into a full group throw {@link GroupFullException}.
 * </ul>
 *
 * {@link TableOptions#initialCapacity()} sizes the first table: the smallest with {@code 2N * 0.75
 * >= capacity}.
 */
public final class GroupProvider implements SchemeProvider {
  /** The scheme name in pool headers. */
  public static final String NAME = "group";
  /** The group-size parameter. */
  public static final String GROUP_SIZE = "groupSize";
  /** The expansion switch parameter. */
  public static final String EXPAND = "expand";

  /** For {@link java.util.ServiceLoader}. */
  public GroupProvider() {}

  /**
   * Its table block comes from {@link Pool#schemeAllocator()} (a PMDK object on an llpl pool); a
   * resize's old block is freed after the epoch grace period its optimistic readers need.
   */
  @Override
  public boolean usesSchemeAllocator() {
    return true;
  }

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public int layoutVersion() {
    return GroupLayout.LAYOUT_VERSION;
  }

  @Override
  public Map<String, Long> defaultParams() {
    Map<String, Long> m = new LinkedHashMap<>();
    m.put(GROUP_SIZE, (long) GroupLayout.DEFAULT_GROUP_SIZE);
    m.put(EXPAND, 1L);
    return m;
  }

  @Override
  public long[] headerParams(TableOptions options) {
    long g = options.param(GROUP_SIZE, GroupLayout.DEFAULT_GROUP_SIZE);
    checkGroupSize(g);
    long expand = options.param(EXPAND, 1);
    if (expand != 0 && expand != 1) {
      throw new IllegalArgumentException("group parameter expand must be 0 (fixed size) or 1 (grow when a group is full), got " + expand);
    }
    return new long[] {g, expand};
  }

  static void checkGroupSize(long g) {
    if (g < GroupLayout.MIN_GROUP_SIZE || g > GroupLayout.MAX_GROUP_SIZE || Long.bitCount(g) != 1) {
      throw new IllegalArgumentException("group parameter groupSize must be a power of two in " + GroupLayout.MIN_GROUP_SIZE + ".."
          + GroupLayout.MAX_GROUP_SIZE + " (the paper uses 64..1024, default 256), got " + g);
    }
  }

  @Override
  public LongHashTable create(Pool pool, TableOptions options) {
    long[] p = headerParams(options);
    return GroupTable.create(pool, (int) p[0], p[1] == 1, options.initialCapacity());
  }

  @Override
  public LongHashTable open(Pool pool, TableOptions options) {
    return GroupTable.open(pool);
  }
}
