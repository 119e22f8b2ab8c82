/**
 * NVLH (Wan, Li, Zhou, Zeng, Li, Xue, "NVLH: Crash-consistent Linear Hashing for Non-Volatile
 * Memory", NVMSA 2018; {@code nvlh-linear-hashing.txt}) and its baseline NVDH, a persistent
 * double-hashing table that rehashes everything when it fills (§IV). Format: {@code
 * docs/format/nvlh.md}.
 *
 * <h2>Structure (§II, Fig. 1)</h2>
 *
 * Litwin's linear hashing over 128-byte buckets of seven pairs ({@link
 * io.pmhash.schemes.nvlh.NvlhLayout}): round {@code i}, split pointer {@code p}, {@code N = n0 *
 * 2^i}; a key lives in the chain of primary bucket {@code h mod N}, or {@code h mod 2N} if that
 * bucket was already split this round. A full chain gets an overflow bucket; by default (as in
 * Fig. 1) every such collision splits bucket {@code p} (not the bucket that overflowed); the
 * round advances when {@code p} reaches {@code N}. Optionally splits follow a load bound
 * instead; the last bucket is merged back when the load falls (contraction). Primary buckets
 * live in segments that never move; the directory of segments grows by doubling without copying.
 *
 * <h2>Assumptions and guarantees</h2>
 *
 * An aligned 8-byte store reaches persistent memory whole. A completed operation survives any
 * crash; the operation in flight is all or nothing; no crash leaves a key twice, loses one,
 * leaks an overflow bucket or segment, or leaves a split or merge half done once recovery has
 * run.
 *
 * <h2>Which operations use a transaction (§III)</h2>
 *
 * Every operation that changes more than one word runs in a durable undo-log transaction
 * ({@link io.pmhash.core.log.UndoLog}, behind the package's small {@code NvlhTxn} seam; on an
 * llpl pool the undo log runs in PMDK's transactions, see docs/llpl.md): an insert that chains a new overflow bucket,
 * a delete that empties an overflow bucket (unlinked and freed), and each step of a split and of
 * a merge ({@link io.pmhash.schemes.nvlh.NvlhResize}). Three operations change one word and skip
 * the log: an insert into a free slot (the pair is written into a slot no one reads, then one
 * meta store publishes it), an update (the 8-byte value in place) and a delete that leaves its
 * bucket non-empty or empties a primary bucket (one meta store).
 *
 * <h2>Persist points per operation</h2>
 *
 * <table class="striped">
 *   <caption>Drains per operation, as {@code NvlhPersistCountTest} asserts (flushed lines there
 *   too)</caption>
 *   <tr><th>operation</th><th>drains</th></tr>
 *   <tr><td>insert into a free slot</td><td>2</td></tr>
 *   <tr><td>update (value in place)</td><td>1</td></tr>
 *   <tr><td>delete, bucket not left an empty overflow bucket</td><td>1</td></tr>
 *   <tr><td>insert chaining an overflow bucket (transaction: snapshot, commit), splits by load
 *       bound or the split after it not possible in the same transaction</td><td>3</td></tr>
 *   <tr><td>insert chaining an overflow bucket with the split on collision it triggers, one
 *       transaction (the default policy)</td><td>3, or 4 when the split frees a source overflow
 *       bucket or chains one to q</td></tr>
 *   <tr><td>delete emptying an overflow bucket (transaction)</td><td>3</td></tr>
 *   <tr><td>split of a chain of at most 4 buckets: one transaction (one snapshot call for the
 *       state and the source headers; nothing of q logged)</td><td>3, or 4 as above</td></tr>
 *   <tr><td>merge of a chain of at most 4 buckets: one transaction</td><td>3 + 1 per receiving
 *       bucket that gets records (+1 when a bucket is freed after the snapshots)</td></tr>
 *   <tr><td>split or merge of a longer chain: start, one move per source bucket, finish</td>
 *       <td>5 + 4 per source bucket that gives records + 5</td></tr>
 *   <tr><td>get, containsKey, miss</td><td>0</td></tr>
 * </table>
 *
 * <h2>Deviations from the paper, and why</h2>
 *
 * <ul>
 *   <li>The paper wraps each split in one transaction; so does this code for a source chain of
 *       at most four buckets. A longer chain would need an undo log larger than a lane, so its
 *       split (or merge) is three or more transactions: start (the in-process flags and the
 *       header's pending words), one per source bucket, finish; the flags carry the split across
 *       them and recovery finishes it. The flags are therefore durable only in that case.
 *   <li>By default a collision and the split it triggers are one transaction ({@link
 *       io.pmhash.schemes.nvlh.NvlhResize#insertAndSplit}): the same all-or-nothing changes as
 *       the paper's two, with one snapshot drain and one commit instead of two of each.
 *   <li>Freed overflow buckets and segments are reused as soon as their transaction commits (no
 *       grace period): readers reach them only under their chain's stripe.
 *   <li>The paper does not say which bucket size it used; 128 bytes matches the other schemes.
 *   <li>Concurrency (the paper's evaluation is single-threaded): a lock per chain (striped) and
 *       a lock for p and the round; see {@link io.pmhash.schemes.nvlh.NvlhTable}.
 *   <li>NVDH's published source is not available; it is rebuilt from the one sentence of §IV and
 *       PMDK's conventions: open addressing, double hashing, tombstones, rehash into a table of
 *       twice the slots at 3/4 load, the root switched in one publication.
 * </ul>
 */
package io.pmhash.schemes.nvlh;
