/**
 * Group hashing (Zhang, Feng, Hua, Chen, Fu, "A Write-efficient and Consistent Hashing Scheme for
 * Non-Volatile Memory", ICPP 2018; {@code group-hashing-icpp2018.txt}), the reference
 * implementation: the paper has no public code. Format: {@code docs/format/group.md}.
 *
 * <h2>Structure (§3.2, Fig. 3)</h2>
 *
 * Two levels of N 16-byte cells each ({@link io.pmhash.schemes.group.GroupLayout}). A key's hash
 * addresses one level-1 cell (its top log2 N bits). Both levels are divided into groups of G
 * contiguous cells (G = 256 by default, §4.5); level-2 group g holds the keys whose level-1 cell is
 * taken and lies in level-1 group g. A lookup reads one level-1 cell and at most one level-2
 * group (its cells whose DRAM fingerprint matches: an extension, below). Each cell has a bit,
 * packed per group into u64 bitmap words.
 *
 * <h2>Assumptions and guarantees</h2>
 *
 * An aligned 8-byte store reaches persistent memory whole (§3.3). Invariants:
 *
 * <ul>
 *   <li>I1: a cell whose bit is durable 1 holds a durable, complete pair. Insert persists the pair,
 *       then sets the bit with one aligned 8-byte store and persists it (Algorithm 1).
 *   <li>I2: a removed key never comes back. Delete clears the bit first and persists it before it
 *       returns (Algorithm 3); the pair of a cell whose bit is 0 is never read.
 *   <li>I3: root 0 names exactly one owned table block, complete and durable. Expansion and shrink
 *       switch it in one allocator step ({@link io.pmhash.schemes.group.GroupResize}).
 * </ul>
 *
 * A completed operation survives any crash; an operation in flight is all or nothing; no crash
 * leaves a key twice or leaks a table block.
 *
 * <h2>What "count" means</h2>
 *
 * The paper persists {@code count} after every insert and delete (Algorithm 1 lines 8–9,
 * Algorithm 3 lines 8–9) and recomputes it by a scan after every crash anyway (Algorithm 4). Here
 * the count is kept in DRAM (striped counters updated before the insert's persists: a DRAM counter
 * keeps no order across a crash, and a locked add after a persist waits for its write-back) and
 * persisted in the global info only at a clean close: after a clean shutdown it is exact and open
 * is O(1); after a crash it is not trusted, and recovery recounts the set bits. Persisting it per
 * operation would cost a flush of one line shared by every writer for a value no code path reads.
 *
 * <h2>Persist points per operation</h2>
 *
 * <table class="striped">
 *   <caption>Drains (and cache lines flushed) per operation, as {@code GroupPersistCountTest}
 *   asserts</caption>
 *   <tr><th>operation</th><th>drains</th><th>lines</th></tr>
 *   <tr><td>insert (level 1 or level 2)</td><td>2</td><td>2</td></tr>
 *   <tr><td>update (8-byte value in place)</td><td>1</td><td>1</td></tr>
 *   <tr><td>delete</td><td>1</td><td>1</td></tr>
 *   <tr><td>get, containsKey, miss, failed conditional write</td><td>0</td><td>0</td></tr>
 *   <tr><td>expansion / shrink to N' cells per level</td><td>1 + 4 (allocator step)</td><td>all
 *       lines of the new block + 6 (allocator step)</td></tr>
 *   <tr><td>recovery after a crash (Algorithm 4)</td><td>0</td><td>0</td></tr>
 * </table>
 *
 * <h2>Extensions of the paper, and deviations</h2>
 *
 * <ul>
 *   <li>Thread safety: a {@link io.pmhash.core.concurrent.VersionLock} per group (in DRAM), taken by
 *       writers; readers are optimistic (snapshot, read, validate, retry) and never write
 *       (but for building a group's DRAM fingerprints once after a clean open). The
 *       paper's table is single-threaded.
 *   <li>Expansion when a group is full (the paper: "the capacity of the hash table needs to be
 *       expanded", no more) and shrink below 1/8 load: a new table, a full rehash, one atomic
 *       switch of root 0 ({@link io.pmhash.schemes.group.GroupResize}). {@code expand=0} keeps the
 *       paper's fixed-size table.
 *   <li>Update in place (the paper has no update): one 8-byte value store.
 *   <li>Delete persists the cleared bit only: zeroing the pair (Algorithm 3 lines 6–7) is done with
 *       plain stores and left to recovery, since a free cell's pair is never read. Lookups test the
 *       bit of every cell they compare (Algorithm 2's level-2 loop compares keys only), so every
 *       key, 0 included, is allowed.
 *   <li>Recovery resets the pairs of free cells in memory without persisting them (Algorithm 4
 *       line 7), and does not persist the recount (lines 19–20): nothing reads either.
 *   <li>The count (above). The bit is packed per group ({@link
 *       io.pmhash.schemes.group.GroupLayout} says why).
 *   <li>DRAM fingerprints: one byte per cell, from the key's hash, not persistent and not part of
 *       the format ({@link io.pmhash.schemes.group.GroupCells}). Lookups compare keys only where
 *       the fingerprint matches, scanning a level-2 group's G fingerprint bytes eight at a time
 *       instead of its occupied cells. Rebuilt after a crash by Algorithm 4's scan; after a clean
 *       shutdown the open stays O(1) and each group is built by the first operation on it.
 *   <li>DRAM hints beside the fingerprints (same class): per level-1 cell, the lowest level-2
 *       word a record of that home overflowed into and the cell of its last overflow; per group,
 *       the first level-2 word that may have a free cell. A lookup that misses its home stops at
 *       once when the home never overflowed, tests the last overflow before it scans, and scans
 *       from the lowest word; an overflowing insert scans from the free word. Placement stays
 *       first-fit.
 * </ul>
 */
package io.pmhash.schemes.group;
