package io.pmhash.llpl;

import io.pmhash.core.Durability;
import io.pmhash.core.Pool;
import io.pmhash.core.PoolOptions;
import io.pmhash.core.alloc.SchemeAllocator;
import java.nio.file.Path;

/**
 * The child JVM of {@link PmdkAllocationTest}: opens the llpl pool the parent prepared, holds an
 * epoch, unlinks the block at root 0 and retires it in one step, prints whether PMDK still holds
 * its object and how many retire records PMDK holds, and halts ({@code Runtime.halt}, no clean
 * close): at {@code retired} with the epoch still held (the grace period never ends), at {@code
 * freed} after leaving the epoch and reclaiming (the grace-free done).
 */
public final class PmdkRetireChild {
  private PmdkRetireChild() {}

  /** @param args pool file, stage */
  public static void main(String[] args) throws Exception {
    Pool pool = Pool.open(Path.of(args[0]), PoolOptions.defaults().withDurability(Durability.PROCESS));
    PmdkAllocation a = (PmdkAllocation) pool.schemeAllocator();
    long block = pool.root(0);
    pool.epochs().enter();
    try (SchemeAllocator.Step s = a.begin()) {
      s.set(pool.rootWord(0), 0).deferFree(block);
      s.commit();
    }
    if (args[1].equals("freed")) {
      pool.epochs().exit();
      for (int i = 0; i < 3; i++) {
        pool.epochs().reclaim();
      }
    }
    System.out.println(block + " " + a.walk().containsKey(block) + " " + a.retireRecords().size());
    System.out.flush();
    Runtime.getRuntime().halt(80);
  }
}
