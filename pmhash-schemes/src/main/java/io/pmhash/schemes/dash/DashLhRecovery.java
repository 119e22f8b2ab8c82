package io.pmhash.schemes.dash;

import static io.pmhash.schemes.dash.DashLayout.LOCK;
import static io.pmhash.schemes.dash.DashLhLayout.NODE_BUCKET;
import static io.pmhash.schemes.dash.DashLhLayout.NODE_BYTES;
import static io.pmhash.schemes.dash.DashLhLayout.SEG_CHAIN_LOCK;
import static io.pmhash.schemes.dash.DashSegment.bucket;

import io.pmhash.core.CorruptPoolException;
import io.pmhash.core.Persistence;
import io.pmhash.core.concurrent.VersionLock;
import io.pmhash.schemes.internal.Damage;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;

/**
 * Lazy segment recovery of Dash-LH: Dash-EH's (Dash §4.8), over the chain too. Opening recovers
 * nothing ({@link DashLhTable#open}); a LIVE segment whose recovery version differs from the global
 * version is recovered by the first thread that needs it, under the segment's recovery lock
 * (Dash-EH's protocol, {@link DashRecovery#lockForRecovery}):
 *
 * <ol>
 *   <li>clear every lock: the buckets', the chain lock, the chained buckets';
 *   <li>drop the records the segment's shape does not cover (an interrupted merge's copies,
 *       {@link DashLhMerge} step 1), recompute fingerprints from keys, remove displacement
 *       duplicates, recount (Dash-EH's
 *       {@link DashRecovery#repairRecords}; for chained buckets fingerprints and counts);
 *   <li>rebuild the overflow metadata, chained records included;
 *   <li>persist all of it, then persist the segment's version = global version.
 * </ol>
 *
 * An interrupted split needs nothing here (see {@link DashLhSplit}: a crash before n's commit
 * left n ABSENT, after it the split's steps 3–4 run when p is next needed). Every step is
 * idempotent and each loop is bounded by the segment's buckets and its chain (a chain is
 * acyclic: a node is linked only once, at the head, when it is new), so a crash during recovery
 * only repeats it at the next open and recovery always ends.
 */
final class DashLhRecovery {
  private final DashLhTable table;
  private final Persistence p;
  private final DashSegment segs;
  private final DashLhSegment lh;

  DashLhRecovery(DashLhTable table) {
    this.table = table;
    this.p = table.persistence;
    this.segs = table.segments;
    this.lh = table.lh;
  }

  /** Recovers {@code seg} (LIVE) unless another thread did or does. */
  void recover(long seg) {
    MemorySegment m = table.pool.memory();
    long gv = table.globalVersion;
    if (!DashRecovery.lockForRecovery(m, seg, gv)) {
      return;
    }
    try {
      if ((long) DashLayout.LONG.getAcquire(m, seg + DashLhLayout.SEG_VERSION) != gv) {
        repair(m, seg);
        DashRecovery.markRecovered(m, p, seg, gv);
        table.recoveredSegments.incrementAndGet();
      }
    } finally {
      DashRecovery.unlockRecovery(m, seg, gv);
    }
  }

  private void repair(MemorySegment m, long seg) {
    int buckets = segs.normal + segs.stash;
    // (1) locks
    for (int i = 0; i < buckets; i++) {
      VersionLock.reset(m, bucket(seg, i) + LOCK);
    }
    VersionLock.reset(m, seg + SEG_CHAIN_LOCK);
    long maxNodes = m.byteSize() / NODE_BYTES;
    long nodes = 0;
    for (long node = DashLhSegment.chainHead(m, seg); node != 0; node = DashLhSegment.nextNode(m, node)) {
      // nothing in a file is trusted: a link outside the pool, or a cycle, is corruption
      if (Damage.outsideBlocks(table.pool, table.pool.schemeAllocator(), node, NODE_BYTES) || (node & 63) != 0 || ++nodes > maxNodes) {
        throw new UncheckedIOException(new CorruptPoolException("dash-lh: the chain of segment at " + seg
            + " links to " + node + (nodes > maxNodes ? " in a cycle" : ", outside the pool") + "; the pool is corrupt"));
      }
      long b = node + NODE_BUCKET;
      VersionLock.reset(m, b + LOCK);
      // (2) for chained buckets: fingerprints and counts (no displacement reaches the chain)
      DashRecovery.refreshFingerprints(segs, m, b);
      DashRecovery.recount(m, b);
    }
    // (2) records the shape does not cover are the copies of an interrupted merge (DashLhMerge
    // step 1): dropped, so that no later merge of this segment duplicates them
    lh.dropUncovered(m, seg, DashSegment.shapeAcquire(m, seg));
    // the segment's buckets
    DashRecovery.repairRecords(segs, m, seg, buckets);
    // (3) overflow metadata
    lh.rebuildOverflow(m, seg);
    segs.flushAllMeta(seg);
    lh.flushChainMeta(m, seg);
    // PERSIST(§4.8 steps 1-3): locks clear, duplicates gone, metadata rebuilt, durably, before the version says recovered
    p.drain();
  }
}
