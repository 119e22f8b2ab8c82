package io.pmhash.llpl;

import io.pmhash.core.Durability;
import io.pmhash.core.Pool;
import io.pmhash.core.PoolOptions;
import io.pmhash.core.log.Tx;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;

/**
 * The child JVM of {@link LlplTransactionTest}: opens the llpl pool the parent prepared, runs one
 * transaction (snapshot of the block at root 0 and new words in it, an allocation linked from
 * it, a free of the block at root 1), prints the allocated block's offset, and halts ({@code
 * Runtime.halt}, no clean close) where its argument says: {@code body} before {@code commit};
 * {@code committed} after it; {@code before} and {@code after} run with {@code
 * -Dpmhash.llpl.haltInCommit}, which halts inside the commit on either side of PMDK's commit point.
 */
public final class LlplTxChild {
  private LlplTxChild() {}

  /** @param args pool file, stage */
  public static void main(String[] args) throws Exception {
    Path file = Path.of(args[0]);
    String stage = args[1];
    Pool pool = Pool.open(file, PoolOptions.defaults().withDurability(Durability.PROCESS));
    long block = pool.root(0);
    long toFree = pool.root(1);
    Tx tx = pool.undoLog().begin();
    tx.snapshot(block, LlplTransactionTest.WORDS * 8L);
    long allocated = tx.alloc(100);
    for (int i = 0; i < LlplTransactionTest.WORDS; i++) {
      pool.memory().set(ValueLayout.JAVA_LONG, block + 8L * i, LlplTransactionTest.NEW + i);
    }
    pool.memory().set(ValueLayout.JAVA_LONG, allocated, 4242);
    pool.memory().set(ValueLayout.JAVA_LONG, block + 8, allocated);
    tx.free(toFree);
    System.out.println(allocated);
    System.out.flush();
    if (stage.equals("body")) {
      Runtime.getRuntime().halt(76);
    }
    tx.commit(); // halts inside with -Dpmhash.llpl.haltInCommit
    tx.close();
    Runtime.getRuntime().halt(79);
  }
}
