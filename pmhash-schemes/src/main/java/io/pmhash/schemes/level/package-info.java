/**
 * Level hashing (Zuo, Hua, Wu, "Write-Optimized and High-Performance Hashing Index Scheme for
 * Persistent Memory", OSDI'18; summarised in {@code strata-level-hashing.txt} §3), in the
 * configuration the Dash paper evaluated it (Dash §6.1: 128-byte buckets, lock striping), without
 * the crash-consistency defects found in its published code. Format: {@code docs/format/level.md}.
 *
 * <h2>Structure</h2>
 *
 * Two levels of 128-byte buckets of seven 16-byte slots ({@link
 * io.pmhash.schemes.level.LevelLayout}): a top level of {@code 2^k} buckets addressed by the top
 * {@code k} bits of two hashes ({@code Hashing.hash(key)} and {@code Hashing.hash(key, SEED2)}),
 * and a bottom level of {@code 2^(k-1)} buckets, bucket {@code b} shared by top buckets {@code
 * 2b} and {@code 2b+1}. A lookup probes at most four buckets.
 *
 * <h2>Assumptions and guarantees</h2>
 *
 * An aligned 8-byte store reaches persistent memory whole. A slot is published by the bit of the
 * bucket's token word, the one commit word of a bucket. A completed operation survives any
 * crash; an operation in flight is all or nothing; no crash leaves a key twice once recovery has
 * run, publishes a slot whose pair is not durable, or leaks a level.
 *
 * <h2>Persist points per operation</h2>
 *
 * <table class="striped">
 *   <caption>Drains (and cache lines flushed) per operation, as {@code LevelPersistCountTest}
 *   asserts</caption>
 *   <tr><th>operation</th><th>drains</th><th>lines</th></tr>
 *   <tr><td>insert into a free slot</td><td>2</td><td>2</td></tr>
 *   <tr><td>update, free slot in the bucket (opportunistic)</td><td>2</td><td>2</td></tr>
 *   <tr><td>update, bucket full (8-byte value in place)</td><td>1</td><td>1</td></tr>
 *   <tr><td>delete</td><td>1</td><td>1</td></tr>
 *   <tr><td>insert after one movement</td><td>5</td><td>5</td></tr>
 *   <tr><td>get, containsKey, miss</td><td>0</td><td>0</td></tr>
 * </table>
 *
 * <h2>Deviations from the published code, and why</h2>
 *
 * <ul>
 *   <li>Insert, update and movement persist the pair before the token store that publishes it
 *       (the published code set the token first on ten paths).
 *   <li>The opportunistic update flips the new and old tokens in one 8-byte store (the published
 *       code used two persists: a crash between them left the key twice or lost it).
 *   <li>A movement between two buckets cannot be one store: the copy is published first, the
 *       original retracted second, and recovery removes the duplicate a crash between them
 *       leaves. Lookups tolerate it meanwhile (both copies hold the same value).
 *   <li>Resize and shrink publish top, bottom and k, the new level's ownership and the old
 *       level's release in one allocator step (a redo step; one {@code pmemobj_publish} on llpl), after the new level is durable (the
 *       published code stored the new capacity before the level existed; its shrink was not
 *       atomic).
 *   <li>Tokens are bits of one 8-byte word; empty slots need no reserved key, so every key is
 *       allowed.
 *   <li>Recovery after a crash scans both levels to remove duplicates and count records; the
 *       paper's recovery reads no bucket (Dash Table 1: 53 ms at every size). After a clean
 *       shutdown opening is O(1).
 *   <li>Shrink runs when a delete leaves the table below 10 % load; the paper leaves the trigger
 *       to the application.
 * </ul>
 */
package io.pmhash.schemes.level;
