package io.pmhash.stress.lin;

import java.util.HashMap;
import java.util.Map;
import java.util.Objects;

/**
 * The specification Lincheck compares {@link MapOperations} with: the same operations, one at a
 * time, on a {@link HashMap}. Method names and parameters match {@link MapOperations} exactly,
 * as Lincheck requires.
 */
public class SequentialMap {
  private final Map<Integer, Long> map = new HashMap<>();

  /** An empty map. */
  public SequentialMap() {}

  /**
   * @param key the key
   * @return its value or {@link MapOperations#ABSENT}
   */
  public long get(int key) {
    return map.getOrDefault(key, MapOperations.ABSENT);
  }

  /**
   * @param key the key
   * @return whether it is present
   */
  public boolean containsKey(int key) {
    return map.containsKey(key);
  }

  /**
   * @param key the key
   * @param value the value
   * @return whether the key was absent
   */
  public boolean put(int key, int value) {
    return map.put(key, (long) value) == null;
  }

  /**
   * @param key the key
   * @param value the value
   * @return whether it was inserted
   */
  public boolean putIfAbsent(int key, int value) {
    return map.putIfAbsent(key, (long) value) == null;
  }

  /**
   * @param key the key
   * @param value the new value
   * @return whether the key was present
   */
  public boolean replace(int key, int value) {
    return map.replace(key, (long) value) != null;
  }

  /**
   * @param key the key
   * @param expected the value it must have
   * @param value the new value
   * @return whether it was replaced
   */
  public boolean replaceIf(int key, int expected, int value) {
    return map.replace(key, (long) expected, (long) value);
  }

  /**
   * @param key the key
   * @return whether it was removed
   */
  public boolean remove(int key) {
    return map.remove(key) != null;
  }

  /**
   * @param key the key
   * @param expected the value it must have
   * @return whether it was removed
   */
  public boolean removeIf(int key, int expected) {
    return Objects.equals(map.get(key), (long) expected) && map.remove(key) != null;
  }
}
