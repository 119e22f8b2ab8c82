/**
 * The pool, its durability modes and the persistence seam.
 *
 * <p>A {@link io.pmhash.core.Pool} is one file mapped as a {@link java.lang.foreign.MemorySegment};
 * everything persistent in it refers to other things by 8-byte offsets from the pool base. Every
 * ordering point of every scheme goes through the pool's {@link io.pmhash.core.Persistence}, whose
 * implementation the {@link io.pmhash.core.Durability} mode chooses. See {@code
 * docs/persistence.md} and {@code docs/format/pool.md}.
 *
 * <h2>Naming of memory-order accessors</h2>
 *
 * Accessors of persistent words name their memory order with the JDK's VarHandle vocabulary,
 * once for the whole project (as JCTools does):
 *
 * <table class="striped">
 *   <caption>Accessor names and the VarHandle access mode they use</caption>
 *   <tr><th>name</th><th>access mode</th><th>use</th></tr>
 *   <tr><td>{@code x(...)}</td><td>plain {@code get}</td>
 *       <td>data read under a lock or validated afterwards by a version</td></tr>
 *   <tr><td>{@code xAcquire(...)}</td><td>{@code getAcquire}</td>
 *       <td>a commit word whose value a reader depends on</td></tr>
 *   <tr><td>{@code xVolatile(...)}</td><td>{@code getVolatile}</td><td>rarely; say why</td></tr>
 *   <tr><td>{@code setX(...)}</td><td>plain {@code set}</td>
 *       <td>data not yet published (before the commit word's release store)</td></tr>
 *   <tr><td>{@code setXRelease(...)}</td><td>{@code setRelease}</td>
 *       <td>a commit word: publishes the stores before it</td></tr>
 *   <tr><td>{@code casX(...)}</td><td>{@code compareAndSet}</td><td>locks, contended commit words</td></tr>
 *   <tr><td>{@code getAndOrX(...)}, {@code getAndAndX(...)}</td>
 *       <td>{@code getAndBitwiseOr}, {@code getAndBitwiseAnd}</td>
 *       <td>bitmap words that several threads change</td></tr>
 * </table>
 *
 * <p>Persist points are marked in the code where they happen, with the invariant they keep:
 * {@code // PERSIST(§4.6 step 2): pair durable before the bitmap bit that publishes it}.
 */
package io.pmhash.core;
