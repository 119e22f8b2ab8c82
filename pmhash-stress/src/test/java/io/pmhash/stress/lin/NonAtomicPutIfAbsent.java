package io.pmhash.stress.lin;

import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;

/**
 * The negative control of {@link MapLinearizabilityTest}: a deliberately broken {@code
 * putIfAbsent} over a correct table, check-then-act ({@code containsKey}, then {@code put}) with
 * nothing making the pair atomic. Two threads can both see the key absent and both return
 * {@code true}, which no sequential order allows; Lincheck must report it, or the checker as
 * configured could not catch a broken scheme either. Two keys keep collisions frequent.
 */
@Param(name = "key", gen = IntGen.class, conf = "1:2")
@Param(name = "value", gen = IntGen.class, conf = "1:3")
public class NonAtomicPutIfAbsent {
  private final MapOperations.LinMap table;

  /** A scenario's instance: an empty table of the scheme {@link MapOperations#use} named. */
  public NonAtomicPutIfAbsent() {
    table = MapOperations.scenarioTable();
  }

  /**
   * @param key the key
   * @return its value or {@link MapOperations#ABSENT}
   */
  @Operation
  public long get(@Param(name = "key") int key) {
    return table.get(key);
  }

  /**
   * Broken on purpose: the key can be inserted by another thread between the check and the put.
   *
   * @param key the key
   * @param value the value
   * @return whether this call inserted it
   */
  @Operation
  public boolean putIfAbsent(@Param(name = "key") int key, @Param(name = "value") int value) {
    if (table.containsKey(key)) {
      return false;
    }
    table.put(key, value);
    return true;
  }

  /**
   * @param key the key
   * @return whether it was removed
   */
  @Operation
  public boolean remove(@Param(name = "key") int key) {
    return table.remove(key);
  }
}
