/**
 * The crash simulator and the harness every scheme's crash tests use: crash a small workload
 * at every drain, materialise the durable images the crash may leave, open each as a pool,
 * recover it and check it.
 *
 * <h2>The model</h2>
 *
 * {@link io.pmhash.core.crash.CrashSimulator} is a {@link io.pmhash.core.Persistence}. It keeps
 * a <em>durable shadow</em> of the pool: what the media holds. The shadow starts as the memory
 * the pool maps (the file's content at open) and grows with zeros when the pool grows.
 *
 * <ul>
 *   <li>{@code flush(off, len)} snapshots each 64-byte line of the range: flushed, not yet
 *       drained. A later flush of the same line replaces the snapshot.
 *   <li>{@code drain()} first offers a <em>crash point</em> (a crash just before the drain
 *       completes), then writes the snapshots into the shadow. A store to a line after its
 *       flush is not made durable by that drain: it stays pending until the line is flushed
 *       and drained again.
 *   <li>At a crash point, every aligned 8-byte word whose current (or flushed) value differs
 *       from the shadow is <em>pending</em>: caches may evict a line at any time, and an aligned
 *       8-byte store is the unit that reaches the media whole. Its candidate values are the
 *       shadow's, the flushed snapshot's (if its line was flushed since the last drain) and the
 *       current one.
 * </ul>
 *
 * <p>The images taken at a crash point ({@link io.pmhash.core.crash.ImageKind}): {@code DRAINED}
 * (the shadow alone), {@code ALL_PENDING} (every pending word at its current value: memory as it
 * is), {@code EACH_LINE} (for each line with pending words, that line's current words alone;
 * capped per point, with a note in the report when the cap bites) and {@code RANDOM} (each
 * pending word independently picks one of its candidates; seeded, and replayable from the seed).
 * The harness also crashes at the end of the workload, after its last drain, so the state after
 * every operation completed is checked too.
 *
 * <h2>Limits</h2>
 *
 * <ul>
 *   <li><b>Single-threaded workloads only.</b> A flush or drain from a second thread throws
 *       {@link java.lang.IllegalStateException}: one thread's drain does not order another
 *       thread's flushes, and the model has no notion of per-thread flush queues.
 *   <li>Only values a word holds at a crash point, or held when its line was last flushed, are
 *       produced. A value a word held between two drains and overwrote before any flush (or
 *       before a later flush of its line) is never produced, although real hardware could have
 *       written that line back by eviction at that moment. Crash points are at drains, so an
 *       ordering bug whose window holds no drain is not seen.
 *   <li>Stores narrower than 8 bytes are modelled at word granularity: two 4-byte fields of one
 *       aligned word are durable together. Nothing tears a word.
 *   <li>The images of a crash point are a sample, not every subset: {@code EACH_LINE} and {@code
 *       RANDOM} find most ordering bugs between lines, and more random images find more.
 *   <li>The shadow is kept on the Java heap (pools up to about 16 GiB), and every crash point
 *       scans the whole pool: use small pools (a few MiB, {@link
 *       io.pmhash.core.PoolOptions#withGeometry} with few lanes and 64 KiB chunks) and small
 *       workloads.
 *   <li>The file's length is modelled as durable as soon as the pool grows (the pool extends the
 *       file before it maps it); the header's recorded size is a word like any other.
 * </ul>
 *
 * <h2>Use from a scheme test</h2>
 *
 * The workload marks operation boundaries so that each crash point knows how many operations
 * completed and which one was in flight; the verifier recovers the structure with the scheme's
 * own code and checks it against the test's oracle. A failure names the drain, the operations,
 * the image kind and its seed or line.
 *
 * <pre>{@code
 * long[] keys = {1, 2, 3};
 * CrashHarness.Report r = CrashHarness.builder(tmpfsDir, options)   // options name the scheme
 *     .images(ImageKind.DRAINED, ImageKind.ALL_PENDING, ImageKind.EACH_LINE)
 *     .randomImages(4, 42L)
 *     .crashDuringRecovery(true)
 *     .setup(pool -> MyTable.create(pool))                          // drains here are not crash points
 *     .run((pool, ops) -> {
 *           MyTable t = MyTable.open(pool);
 *           for (int i = 0; i < keys.length; i++) {
 *             ops.begin(i);
 *             t.put(keys[i], 10 * keys[i]);
 *             ops.end(i);
 *           }
 *         },
 *         (pool, point) -> {
 *           MyTable t = MyTable.recover(pool);                     // the scheme's recovery
 *           CrashHarness.recovered(pool);                          // later drains: not crash points
 *           for (int i = 0; i < point.opsCompleted(); i++) {
 *             assertEquals(10 * keys[i], t.get(keys[i]), point.describe());
 *           }
 *           // the in-flight op (point.inFlightOp()) is all or nothing; later keys are absent
 *         });
 * }</pre>
 *
 * {@code run} throws an {@link java.lang.AssertionError} listing the first failures; {@code
 * collect} returns the {@link io.pmhash.core.crash.CrashHarness.Report} instead, for negative
 * controls that expect a failure. {@code onlyDrain(d)} replays one crash point.
 *
 * <h2>The mutation check</h2>
 *
 * Crash tests that pass prove little unless they would fail without the persist calls they
 * exercise. {@link io.pmhash.core.crash.MutationCheck} runs a suite of crash tests once to list
 * every flush and drain call site a simulator sees ({@link io.pmhash.core.crash.MutationSession}
 * names a site by its caller's class, method and line), then once per site with that one site
 * turned into a no-op, and reports each site as caught (some crash image failed in a {@code
 * run}) or survived. The suites of core and the schemes are {@code CoreMutationCheckTest} and
 * {@code SchemeMutationCheckTest}; see {@code docs/reliability.md} for the command and the last
 * table.
 */
package io.pmhash.core.crash;
