package io.pmhash.schemes.group;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.core.Pool;
import io.pmhash.core.hash.Hashing;
import io.pmhash.schemes.contract.PmdkBlocks;
import java.lang.foreign.MemorySegment;
import java.util.HashSet;
import java.util.Set;

/**
 * The structural invariants of a quiescent group-hashing table: root 0 names the table in use and
 * its global info states its geometry, every record sits in its level-1 cell or in the level-2
 * group of that cell's group, no key twice, {@code size()} equals a scan, every free cell is zero
 * when {@code freeCellsZero} (after recovery, which resets them, and on tables with no deletes),
 * the DRAM fingerprints agree with the cells and the overflow and free-word hints bound them
 * ({@link #fingerprints}), and exactly one block is owned (no leaked table).
 */
final class GroupInvariants {
  private GroupInvariants() {}

  static void check(GroupTable t, String at) {
    check(t, at, false);
  }

  static void check(GroupTable t, String at, boolean freeCellsZero) {
    GroupCells c = t.current;
    Pool pool = t.pool;
    MemorySegment m = pool.memory();
    assertEquals(c.base, pool.root(0), at + ": root 0 names the table in use");
    assertEquals(c.cells, (long) GroupLayout.LONG.get(m, c.base + GroupLayout.INFO_TABLE_SIZE), at + ": table size");
    assertEquals((long) c.groupSize(), (long) GroupLayout.LONG.get(m, c.base + GroupLayout.INFO_GROUP_SIZE), at + ": group size");
    Set<Long> keys = new HashSet<>();
    long n = 0;
    for (long cell = 0; cell < c.capacity(); cell++) {
      boolean set = ((long) GroupLayout.LONG.get(m, c.bitmapWord(cell)) & 1L << cell) != 0;
      long key = c.key(m, cell);
      if (!set) {
        if (freeCellsZero) {
          assertTrue(key == 0 && c.value(m, cell) == 0, at + ": free cell " + cell + " is not zero");
        }
        continue;
      }
      n++;
      long home = c.home(Hashing.hash(key));
      boolean placed = cell == home || cell >= c.cells && c.groupOf(cell - c.cells) == c.groupOf(home);
      assertTrue(placed, at + ": key " + key + " in cell " + cell + ", neither its level-1 cell " + home + " nor its level-2 group");
      assertTrue(keys.add(key), at + ": key " + key + " twice");
    }
    assertEquals(n, t.size(), at + ": size equals a scan");
    fingerprints(t, at);
    // the table block is the only owned block (no leaked table), on pmhash's allocator or PMDK's
    PmdkBlocks.requireOwnedExactly(pool, Set.of(c.base), at);
  }

  /**
   * The DRAM fingerprints of a quiescent table agree with its cells: in a group whose fingerprints
   * are built, a cell whose bit is 0 has fingerprint 0 and a cell whose bit is 1 the fingerprint
   * of its key's hash (never 0); in a group not built yet (after a clean open) every fingerprint
   * and level-1 entry is 0. The hints ({@link GroupCells}): an occupied level-2 cell's home has a
   * non-zero overflow word naming the cell's fingerprint word or an earlier one; a last overflow
   * names a cell of the level-2 group (or none); every level-2 word below a group's free word is
   * full.
   *
   * @return the number of occupied cells
   */
  static long fingerprints(GroupTable t, String at) {
    GroupCells c = t.current;
    MemorySegment m = t.pool.memory();
    long n = 0;
    for (long cell = 0; cell < c.capacity(); cell++) {
      boolean set = ((long) GroupLayout.LONG.get(m, c.bitmapWord(cell)) & 1L << cell) != 0;
      boolean built = c.built(c.groupOf(cell & (c.cells - 1)));
      int expected = set && built ? GroupCells.fingerprint(Hashing.hash(c.key(m, cell))) : 0;
      if (c.fp(cell) != expected) {
        assertEquals(expected, c.fp(cell), at + ": fingerprint of " + (set ? "occupied" : "free") + " cell " + cell + " of a "
            + (built ? "built" : "not yet built") + " group");
      }
      n += set ? 1 : 0;
      if (cell < c.cells && !built && c.homeEntry(cell) != 0) {
        assertEquals(0, c.homeEntry(cell), at + ": entry of cell " + cell + " of a not yet built group");
      }
      if (cell < c.cells && c.lastOverflow(cell) > c.groupSize()) {
        assertTrue(false, at + ": last overflow " + c.lastOverflow(cell) + " of cell " + cell + " is outside its level-2 group");
      }
      if (set && built && cell >= c.cells) {
        long home = c.home(Hashing.hash(c.key(m, cell)));
        long word = (cell - c.level2First(c.groupOf(home))) >>> 3;
        int hint = c.overflowWord(home);
        assertTrue(hint != 0 && hint - 1 <= word, at + ": overflow hint " + hint + " of home " + home
            + " does not bound its level-2 record in cell " + cell + " (fingerprint word " + word + ")");
      }
    }
    for (long g = 0; g < c.groups; g++) {
      long first = c.level2First(g);
      for (int w = 0; w < c.freeFrom(g); w++) {
        for (long cell = first + 8L * w; cell < first + 8L * w + 8; cell++) {
          boolean set = ((long) GroupLayout.LONG.get(m, c.bitmapWord(cell)) & 1L << cell) != 0;
          assertTrue(set, at + ": level-2 cell " + cell + " is free below group " + g + "'s free-word hint " + c.freeFrom(g));
        }
      }
    }
    return n;
  }

  /** @return the groups whose fingerprints are built */
  static long builtGroups(GroupTable t) {
    GroupCells c = t.current;
    long n = 0;
    for (long g = 0; g < c.groups; g++) {
      n += c.built(g) ? 1 : 0;
    }
    return n;
  }
}
