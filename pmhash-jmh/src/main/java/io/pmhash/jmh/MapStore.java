package io.pmhash.jmh;

import java.util.concurrent.ConcurrentMap;

/**
 * A {@code ConcurrentMap<Long, Long>} as a {@link Store}: {@code ConcurrentHashMap}, Chronicle
 * Map and MapDB's {@code HTreeMap} are all used through this API, as most of their users call
 * them (boxing included: it is part of what they cost).
 *
 * @param map the map
 * @param description what it is and where it lives
 * @param closer what closing the store does
 */
record MapStore(ConcurrentMap<Long, Long> map, String description, Runnable closer) implements Store {
  @Override
  public long get(long key, long absent) {
    Long v = map.get(key);
    return v == null ? absent : v;
  }

  @Override
  public void put(long key, long value) {
    map.put(key, value);
  }

  @Override
  public void remove(long key) {
    map.remove(key);
  }

  @Override
  public long size() {
    return map.size();
  }

  @Override
  public String describe() {
    return description;
  }

  @Override
  public void close() {
    closer.run();
  }
}
