/**
 * JMH benchmarks. Each class states its run command; all fork with
 * {@code --enable-native-access=ALL-UNNAMED} (the shaded jar runs on the class path, where
 * pmhash-core is unnamed) and keep their inputs precomputed outside the measured region.
 *
 * <ul>
 *   <li>{@link io.pmhash.jmh.MapBenchmark}: the Dash benchmark's operations on any store, with
 *       {@link io.pmhash.jmh.TableBenchmark} (every pmhash scheme and durability mode; {@link
 *       io.pmhash.jmh.AllSchemes} adds every registered scheme) and the JVM's alternatives
 *       ({@link io.pmhash.jmh.ConcurrentHashMapBenchmark}, {@link
 *       io.pmhash.jmh.ChronicleMapBenchmark}, {@link io.pmhash.jmh.MapDbBenchmark}, {@link
 *       io.pmhash.jmh.RocksDbBenchmark}, and a bare llpl heap table in {@link
 *       io.pmhash.jmh.LlplHeapBenchmark}) over the same keys, and {@link
 *       io.pmhash.jmh.PointerMapBenchmark} (16-byte keys: a {@code PmHashMap<byte[], byte[]>} in
 *       Dash-EH's pointer mode).
 *   <li>Baselines: {@link io.pmhash.jmh.PersistenceBenchmark} (flush, drain, persist), {@link
 *       io.pmhash.jmh.DowncallBenchmark}, {@link io.pmhash.jmh.HashingBenchmark}, {@link
 *       io.pmhash.jmh.ProbeBenchmark}, {@link io.pmhash.jmh.EpochBenchmark}, {@link
 *       io.pmhash.jmh.PoolGrowthBenchmark} (one growth of a pool file).
 * </ul>
 *
 * The papers' experiments are {@link io.pmhash.jmh.workload.Experiments}; the charts and {@code
 * docs/benchmarks.md} are drawn by {@code io.pmhash.jmh.charts.Charts}. Numbers measured on DRAM
 * or tmpfs are not persistent-memory numbers.
 */
package io.pmhash.jmh;
