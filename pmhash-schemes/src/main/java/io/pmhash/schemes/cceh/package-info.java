/**
 * CCEH: cacheline-conscious extendible hashing (Nam, Choi, Seo, Noh, Noh — "Write-Optimized
 * Dynamic Hashing for Persistent Memory", FAST'19), in the configuration the Dash paper evaluated
 * it (Dash §6.2: 16 KB segments of 64-byte buckets, probing four cache lines), without the crash
 * bugs of its published code ({@code papers/README.md}). Format: {@code docs/format/cceh.md}.
 *
 * <h2>Assumptions and guarantees</h2>
 *
 * <ul>
 *   <li>An aligned 8-byte store reaches the media whole; nothing wider is assumed. Every commit
 *       word (valid-bitmap word, value on update, shape word, split child, directory entry,
 *       directory pointer) is one such store, written with release semantics and read with
 *       acquire where a reader depends on it.
 *   <li>A completed put, replace or remove is durable (to the extent of the pool's durability
 *       mode) when it returns: an insert costs 2 drains, an update 1, a delete 1, when no split
 *       happens; a split 7 more, a doubling 4 more. A crash leaves an operation in flight all or
 *       nothing.
 *   <li>Every key and value is allowed: a valid bitmap marks used slots (no reserved key).
 *   <li>Concurrency as in the paper: one reader-writer lock per segment (readers write the lock
 *       word, unlike Dash's optimistic readers), and a directory lock for splits' directory
 *       updates and doublings. Linearizable.
 *   <li>Open after a crash scans the directory and rolls interrupted splits forward: its cost
 *       grows with the directory (the paper's recovery; Dash Table 1).
 * </ul>
 *
 * <h2>Deviations from the paper and its code</h2>
 *
 * <ul>
 *   <li>A valid bitmap per segment (16 words) replaces the reserved empty key and the sentinel
 *       key of an insert in progress; the segment grows from 16,384 to 16,576 bytes.
 *   <li>A split builds the new segment completely, then makes it owned and records it in the old
 *       segment's split-child word in one redo step, updates the directory, and only then raises
 *       the old segment's depth (the published code raised it first). Stale copies in the old
 *       segment are removed in the split (bits cleared), not left for lazy deletion.
 *   <li>Repeated inserts of one key are updates: a key in its window is found before a free slot
 *       is looked for, so they never split (the published code split on them).
 *   <li>Delete is implemented (a TODO in the published code); no segment merge or directory
 *       halving (neither has CCEH).
 *   <li>Old directories are freed after an epoch grace period (Dash §6.1's fix).
 * </ul>
 */
package io.pmhash.schemes.cceh;
