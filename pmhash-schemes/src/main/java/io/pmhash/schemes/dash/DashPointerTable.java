package io.pmhash.schemes.dash;

import static io.pmhash.schemes.dash.DashBucket.*;
import static io.pmhash.schemes.dash.DashLayout.*;
import static io.pmhash.schemes.dash.DashSegment.*;

import io.pmhash.core.Pool;
import io.pmhash.core.alloc.SchemeAllocator;
import io.pmhash.core.concurrent.EpochReclaimer;
import io.pmhash.core.concurrent.VersionLock;
import io.pmhash.core.hash.Hashing;
import io.pmhash.map.TableStats;
import io.pmhash.map.spi.BytesConsumer;
import io.pmhash.map.spi.BytesTable;
import io.pmhash.map.spi.OutOfLineRecord;
import io.pmhash.schemes.internal.Damage;
import java.lang.foreign.MemorySegment;

/**
 * Dash-EH in pointer mode (Dash §4.5): variable-length keys and values in {@link
 * OutOfLineRecord}s, a slot holding {@code {record offset, hash}}. The segments, splits, merges,
 * recovery and routing are the inline table's ({@link DashEhTable}, built with {@code pointer =
 * true}); this class holds the operations that read or change records. The inline hot path is
 * untouched: it never reaches this class, and the pointer-mode branches in {@link DashSegment}
 * sit on its structural paths or test a reservation the inline writer passes as a constant null.
 *
 * <p><b>Readers</b> (Dash Algorithm 3 plus one rule): snapshot the two bucket versions, probe
 * (fingerprint, then the slot's full hash, then the record's key bytes), read the slot's record
 * offset, validate; then copy the value out of the record. The copy happens after validation
 * but inside the reader's epoch: the record was linked at the validation, and a record unlinked
 * after the reader entered its epoch is freed only through {@link EpochReclaimer}, so it is
 * neither reused nor overwritten before the reader leaves. Records are never written after
 * they are linked (an update links a new record), so no reader sees a torn or freed value.
 *
 * <p><b>Writers</b> write and flush the new record before taking the bucket locks, then link it
 * with one redo step of the allocator under the locks ({@link DashSegment#insertRecordLocked},
 * {@link DashSegment#replaceRecordLocked}, {@link DashSegment#deleteRecordLocked}); a record not
 * linked (the key was present, or absent, or the operation failed) is cancelled: it was never
 * owned, so a crash at any point before the step leaks nothing.
 */
final class DashPointerTable implements BytesTable {
  private static final int PUT = 0;
  private static final int PUT_IF_ABSENT = 1;
  private static final int REPLACE = 2;
  private static final int REPLACE_IF = 3;
  private static final int REMOVE = 4;
  private static final int REMOVE_IF = 5;

  final DashEhTable table;
  private final Pool pool;

  DashPointerTable(DashEhTable table) {
    if (!table.segments.pointer) {
      throw new IllegalArgumentException("an inline dash-eh table cannot hold records out of line");
    }
    this.table = table;
    this.pool = table.pool;
  }

  // ---------------------------------------------------------------- reads

  @Override
  public byte[] get(byte[] key) {
    long h = Hashing.hash(key);
    int fp = fingerprintOf(h);
    int y = table.segments.bucketIndex(h);
    MemorySegment k = MemorySegment.ofArray(key);
    EpochReclaimer e = table.epochs;
    EpochReclaimer.Section section = e.enterSection();
    try {
      for (;;) {
        MemorySegment m = pool.memory();
        long seg = table.locate(m, h);
        if (seg < 0) {
          continue;
        }
        long b1 = bucket(seg, y);
        long b2 = bucket(seg, (y + 1) & table.segments.mask);
        int v1 = VersionLock.snapshotAcquire(m, b1 + LOCK);
        int v2 = VersionLock.snapshotAcquire(m, b2 + LOCK);
        if (((v1 | v2) & VersionLock.LOCK_BIT) != 0) {
          Damage.awaitUnlocked(m, (v1 & VersionLock.LOCK_BIT) != 0 ? b1 + LOCK : b2 + LOCK, "dash-eh bucket lock");
          continue;
        }
        if (!covers(shapeAcquire(m, seg), h)) {
          continue;
        }
        long loc = table.segments.findRecord(m, seg, b1, b2, h, fp, k);
        long rec = loc >= 0 ? DashBucket.key(m, loc & ~63L, (int) loc & 63) : 0;
        if (!VersionLock.validate(m, b1 + LOCK, v1) || !VersionLock.validate(m, b2 + LOCK, v2)) {
          continue;
        }
        if (loc == STALE_MAPPING) {
          staleMapping(m);
          continue;
        }
        return loc < 0 ? null : valueOf(rec);
      }
    } finally {
      e.exit(section);
    }
  }

  /** A validated slot named a record beyond the mapping: the pool grew, or the table is damaged. */
  private void staleMapping(MemorySegment m) {
    if (m == pool.memory()) {
      throw new IllegalStateException("dash-eh: a slot names a record beyond the pool's end: the pool is damaged");
    }
  }

  /** The value of a record linked at some point during the caller's epoch. */
  private byte[] valueOf(long rec) {
    byte[] v = OutOfLineRecord.value(pool.memory(), rec);
    if (v == null) {
      throw new IllegalStateException("dash-eh: record at " + rec + " lies beyond the pool's end: the pool is damaged");
    }
    return v;
  }

  // ---------------------------------------------------------------- writes

  @Override
  public byte[] put(byte[] key, byte[] value) {
    return write(key, value, null, PUT);
  }

  @Override
  public byte[] putIfAbsent(byte[] key, byte[] value) {
    return write(key, value, null, PUT_IF_ABSENT);
  }

  @Override
  public byte[] replace(byte[] key, byte[] value) {
    return write(key, value, null, REPLACE);
  }

  @Override
  public boolean replace(byte[] key, byte[] expected, byte[] value) {
    return write(key, value, expected, REPLACE_IF) != null;
  }

  @Override
  public byte[] remove(byte[] key) {
    return write(key, null, null, REMOVE);
  }

  @Override
  public boolean remove(byte[] key, byte[] expected) {
    return write(key, null, expected, REMOVE_IF) != null;
  }

  /**
   * Every writer: write the new record (if the operation may need one), lock the key's two
   * buckets, act, unlock (Dash §4.4).
   *
   * @return the value before the operation where it changed something (PUT, REPLACE*, REMOVE*);
   *     for PUT_IF_ABSENT the present value; null otherwise
   */
  private byte[] write(byte[] key, byte[] value, byte[] expected, int op) {
    long h = Hashing.hash(key);
    int fp = fingerprintOf(h);
    int y = table.segments.bucketIndex(h);
    int y2 = (y + 1) & table.segments.mask;
    MemorySegment k = MemorySegment.ofArray(key);
    DashSegment s = table.segments;
    SchemeAllocator.Reserved r = op < REMOVE ? newRecord(key, value) : null;
    EpochReclaimer e = table.epochs;
    long emptied = 0;
    EpochReclaimer.Section section = e.enterSection();
    try {
      for (;;) {
        MemorySegment m = pool.memory();
        long seg = table.locate(m, h);
        if (seg < 0) {
          continue;
        }
        long b1 = bucket(seg, y);
        long b2 = bucket(seg, y2);
        long held = lockPair(m, b1, b2, y < y2);
        long shape;
        try {
          shape = shapeAcquire(m, seg);
          if (!covers(shape, h)) {
            continue;
          }
          // read after locking: covers every record linked by a writer that held these locks
          MemorySegment lm = pool.memory();
          long loc = s.findRecord(lm, seg, b1, b2, h, fp, k);
          if (loc == STALE_MAPPING) {
            throw new IllegalStateException("dash-eh: a slot names a record beyond the pool's end: the pool is damaged");
          }
          long rec = loc >= 0 ? DashBucket.key(lm, loc & ~63L, (int) loc & 63) : 0;
          switch (op) {
            case PUT, REPLACE -> {
              if (loc >= 0) {
                byte[] old = valueOf(rec);
                s.replaceRecordLocked(lm, loc, r);
                r = null;
                return old;
              }
              if (op == REPLACE) {
                return null;
              }
            }
            case PUT_IF_ABSENT -> {
              if (loc >= 0) {
                return valueOf(rec);
              }
            }
            case REPLACE_IF -> {
              if (loc < 0 || !OutOfLineRecord.valueEquals(lm, rec, expected)) {
                return null;
              }
              byte[] old = valueOf(rec);
              s.replaceRecordLocked(lm, loc, r);
              r = null;
              return old;
            }
            default -> { // REMOVE, REMOVE_IF
              if (loc < 0 || (op == REMOVE_IF && !OutOfLineRecord.valueEquals(lm, rec, expected))) {
                return null;
              }
              byte[] old = valueOf(rec);
              emptied = deleteEmpties(lm, b1, loc) ? seg : 0;
              s.deleteRecordLocked(lm, seg, b1, b2, loc, fp);
              return old;
            }
          }
          if (s.insertRecordLocked(lm, seg, y, b1, b2, r, h, fp) == INSERTED) {
            r = null;
            return null;
          }
        } finally {
          unlockPair(m, b1, b2, y < y2, held);
        }
        table.split.split(seg, shape); // the segment is full (Dash §4.7): split it, then retry
      }
    } finally {
      if (r != null) {
        pool.schemeAllocator().cancel(r); // never linked, never owned
      }
      if (emptied != 0) {
        table.merge.maybeMerge(emptied);
      }
      e.exit(section);
    }
  }

  /** Reserves and writes a record, flushed (drained by the redo step that links it). */
  private SchemeAllocator.Reserved newRecord(byte[] key, byte[] value) {
    long size = OutOfLineRecord.size(key, value);
    SchemeAllocator.Reserved r = pool.schemeAllocator().reserve(size);
    OutOfLineRecord.write(pool.memory(), r.offset(), key, value);
    // PERSIST(§4.5 record): flushed now, drained by the first drain of the step that links it, so no slot ever names a record that is not durable
    table.persistence.flush(r.offset(), size);
    return r;
  }

  // ---------------------------------------------------------------- whole table

  @Override
  public long size() {
    return table.size();
  }

  /**
   * One segment per call ({@link DashEhTable#scanPart}: exactly once for a record present
   * throughout); the records are read inside the same epoch, so none is freed meanwhile.
   */
  @Override
  public long scan(long from, BytesConsumer action) {
    long[] words = new long[2 * (table.normal + table.stash) * SLOTS + 1];
    int[] versions = new int[table.normal + table.stash];
    EpochReclaimer e = table.epochs;
    EpochReclaimer.Section section = e.enterSection();
    try {
      long next = table.scanPart(from, words, versions);
      int n = (int) words[words.length - 1];
      MemorySegment now = pool.memory();
      for (int i = 0; i < n; i += 2) {
        byte[] key = OutOfLineRecord.key(now, words[i]);
        byte[] value = OutOfLineRecord.value(now, words[i]);
        if (key == null || value == null) {
          throw new IllegalStateException("dash-eh: record at " + words[i] + " lies beyond the pool's end: the pool is damaged");
        }
        action.accept(key, value);
      }
      return next;
    } finally {
      e.exit(section);
    }
  }

  @Override
  public TableStats stats() {
    return table.stats();
  }

  @Override
  public Pool pool() {
    return pool;
  }

  @Override
  public String scheme() {
    return DashEhProvider.NAME;
  }

  @Override
  public void close() {
    table.close();
  }

  @Override
  public String toString() {
    return "dash-eh pointer-mode " + table;
  }
}
