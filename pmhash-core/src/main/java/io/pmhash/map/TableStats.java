package io.pmhash.map;

import java.util.Map;

/**
 * A snapshot of a table's shape and persist cost.
 *
 * @param scheme the scheme name, e.g. {@code "dash-eh"}
 * @param size records stored
 * @param slots record slots the table has now (normal and stash, or the scheme's equivalent)
 * @param loadFactor {@code size / slots}
 * @param poolBytes bytes the pool file (or reservation) holds
 * @param linesFlushed cache lines flushed since the pool was opened
 * @param drains drains issued since the pool was opened
 * @param details scheme-specific counters (splits, directory depth, stash records, ...)
 */
public record TableStats(
    String scheme,
    long size,
    long slots,
    double loadFactor,
    long poolBytes,
    long linesFlushed,
    long drains,
    Map<String, Long> details) {}
